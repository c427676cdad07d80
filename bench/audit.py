"""What the disclosure audit costs a `tools/call`: the same `cari_anak` call with `ASRAMA_AUDIT_LOG` unset and set.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the demo school (as bench/latency.py does: 1,000 students, 30 days)
   and the real data service is started on it as a process of its own (`mcp-asrama service`, 127.0.0.1, a free
   port, bearer token);
2. MCP servers reach it: in this process (`build_server`, the SDK's in-memory `Client`), and as `mcp-asrama serve`
   subprocesses under the SDK's stdio client, as a host runs them; of each kind one has no audit and one writes its
   audit file in the run's temporary folder (a real file on the machine's disk, fsync'd); one more in process and one
   over stdio write their files on tmpfs (/dev/shm, if there is one), where fsync reaches no disk: the audit's cost
   without the disk's (`--stdio-only`: none in process); with `--baseline REV` (repeatable),
   one more audited stdio server runs revision REV's source (`git archive`, on PYTHONPATH): before and after in the
   same run; with `--http`, a pair of `mcp-asrama serve --transport http` processes (stateless, rate limit lifted)
   under the SDK's HTTP client, as a school's server for many staff runs (and with `--baseline`, one more audited
   for each REV);
3. `cari_anak` (`kelas=7A, limit=20`: 20 students disclosed per call) is sent to each, 2026-07-28 era, as a
   round trip on the wire (`session.send_request`); every answer is checked to list the same students, and the
   audited servers' files to hold one line per timed call, chained intact (`audit_check.verify`);
4. the servers are called interleaved, round by round, the order rotating each round, so that noise from elsewhere
   on the machine hits both sides of a pair alike; reported: p50 and p90 per server, and per pair the ratio of the
   audited p50 to the unaudited p50 (target <= 1.03) and their difference;
5. throughput at `--concurrency` calls in flight (default 8): a server is measured as a closed loop of that many
   tasks for a slice (every answer checked). Each round, each audited server in turn (the order rotating each
   round, `--slices` rounds) runs beside the unaudited server of its pair in ABBA order: unaudited, audited,
   audited, unaudited, half of `--slice` seconds each, so that the machine's drift over seconds (large on a VM)
   hits both sides of a ratio alike. Reported: calls/s per server, and per audited server the median over rounds
   of its calls/s over the unaudited server's in the same ABBA group (target >= 0.95: concurrent lines share one
   fsync, group commit), a 95 % bootstrap interval of that median, the rounds' lowest and highest, and the CPU per
   call of each stdio server's process (/proc, around each slice);
6. the parts of an audited call, each timed alone (interleaved too) on the real result of the same call: the line's
   write (`append`: flock, write, fsync) inline, through a worker thread and as the server writes it
   (`append_async`: on the event loop while the disk is fast, its fsync by Linux AIO where there is), a worker
   thread's handoff with no work,
   and finding the disclosed ids in the result's wire dict (what the SDK hands the middleware).

Prints a markdown report on stdout, progress on stderr; exits non-zero only on an error (a failed call, different
answers, a broken chain). Run the previous code with the same script: `git worktree add /tmp/audit-old HEAD~N`,
then `PYTHONPATH=/tmp/audit-old/src .venv/bin/python bench/audit.py` (the subprocesses inherit PYTHONPATH).

    .venv/bin/python bench/audit.py            # 600 rounds, 10 throughput slices per server (4 minutes quiet)
    .venv/bin/python bench/audit.py --quick    # 150 rounds, 4 slices
    .venv/bin/python bench/audit.py --baseline 5cf1595~1   # beside the code before group commit
    .venv/bin/python bench/audit.py --stdio-only --rounds 30 --slices 60   # the throughput verdict, over stdio only
"""

import argparse
import contextlib
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.to_thread import run_sync as to_thread
from mcp import Client
from mcp_types import CallToolResult

import common
import mcp_asrama
from mcp_asrama.runtime.logs import configure_logging
from mcp_asrama.server.app import build_server
from mcp_asrama.server.guard import audit, audit_check, audit_log
from mcp_asrama.server.settings import ServerSettings

ARGUMENTS = {"kelas": "7A", "limit": 20}
TARGET = 1.03  # audited p50 / unaudited p50, at most
THROUGHPUT_TARGET = 0.95  # audited calls/s / unaudited calls/s at `--concurrency`, at least
PROTOCOL = "2026-07-28"


@dataclass
class Server:
    """One MCP server of a pair: how to call it, its audit file (None: no audit), and its samples (ms)."""

    name: str
    pair: str
    call: Callable[[], Awaitable[CallToolResult]]
    audit_file: Path | None
    judged: bool = True  # held to the target (the tmpfs server is shown beside, not judged)
    samples: list[float] = field(default_factory=list)
    slices: list[tuple[int, float]] = field(default_factory=list)  # (calls, seconds) of each throughput slice
    ratios: list[float] = field(default_factory=list)  # audited: its calls/s over its pair's unaudited, each round
    pid: int = 0  # the server's process (stdio), whose CPU is read around each slice; 0: this process
    cpu_ms: float = 0.0  # its CPU over every slice


def caller(client: Client) -> Callable[[], Awaitable[CallToolResult]]:
    async def call() -> CallToolResult:
        return await common.round_trip(client, common.tool_call("cari_anak", ARGUMENTS))

    return call


def students(result: CallToolResult) -> list[str]:
    if result.is_error or not isinstance(result.structured_content, dict):
        raise RuntimeError(f"cari_anak failed: {result.content}")
    return [row["id"] for row in result.structured_content["data"]]


def revisions(kind: str, folder: Path, baselines: list[tuple[str, Path]]) -> list[tuple[str, Path, dict[str, str]]]:
    """One audited `kind` server (name, audit file, environment) for each revision's source in `baselines`."""
    return [
        (f"{kind}, audit on, code of {rev}", folder / f"audit-{kind}-old-{n}.jsonl", {"PYTHONPATH": str(src)})
        for n, (rev, src) in enumerate(baselines)
    ]


@contextlib.asynccontextmanager
async def servers(
    folder: Path,
    ram: Path | None,
    service_url: str,
    baselines: list[tuple[str, Path]],
    stdio_only: bool = False,
    http: bool = False,
) -> AsyncIterator[list[Server]]:
    """The servers, connected: in process and over stdio, each without and with an audit file (and in process with
    its file in `ram`, a tmpfs folder, if there is one; over stdio, one with its file in `ram` and, with
    each of `baselines`, one running that revision's source: shown beside, not judged). `stdio_only`: none in
    process. `http`: a pair of `mcp-asrama serve --transport http` processes too (stateless, the SDK's client), and
    one more audited for each of `baselines`."""
    in_memory: list[tuple[str, Path | None]] = []
    if not stdio_only:
        in_memory += [("in memory, audit off", None), ("in memory, audit on", folder / "audit-memory.jsonl")]
        if ram is not None:
            in_memory.append(("in memory, audit on, file on tmpfs (fsync: no disk)", ram / "audit-memory.jsonl"))
    async with contextlib.AsyncExitStack() as stack:
        found: list[Server] = []
        for name, path in in_memory:
            server = build_server(ServerSettings(api_url=service_url, api_token=common.TOKEN, audit_log=path))
            client = await stack.enter_async_context(Client(server, mode=PROTOCOL, cache=None))
            judged = path is None or path.parent == folder
            found.append(Server(name, "in memory", caller(client), path, judged=judged))
        serve = [common.EXECUTABLE, "--log-level", "WARNING", "serve"]
        stdio: list[tuple[str, Path | None, dict[str, str]]] = [
            ("stdio, audit off", None, {}),
            ("stdio, audit on", folder / "audit-stdio.jsonl", {}),
        ]
        if ram is not None:
            stdio.append(("stdio, audit on, file on tmpfs (fsync: no disk)", ram / "audit-stdio.jsonl", {}))
        stdio += revisions("stdio", folder, baselines)
        for n, (name, path, extra) in enumerate(stdio):
            extra |= {"ASRAMA_AUDIT_LOG": str(path)} if path else {}
            env = common.clean_env(folder, ASRAMA_API_URL=service_url, ASRAMA_API_TOKEN=common.TOKEN, **extra)
            client, pid = await common.stdio_session(stack, serve, env, folder / f"stdio-{n}.log", PROTOCOL)
            found.append(Server(name, "stdio", caller(client), path, judged=n < 2, pid=pid))
        over_http: list[tuple[str, Path | None, dict[str, str]]] = []
        if http:
            over_http += [("http, audit off", None, {}), ("http, audit on", folder / "audit-http.jsonl", {})]
            over_http += revisions("http", folder, baselines)
        for n, (name, path, extra) in enumerate(over_http):
            extra |= {"ASRAMA_AUDIT_LOG": str(path)} if path else {}
            env = common.server_env(folder, service_url, **extra)
            running = await stack.enter_async_context(common.mcp_http_server(folder, env, "WARNING", f"mcp-http-{n}"))
            client = await stack.enter_async_context(Client(f"{running.url}/mcp", mode=PROTOCOL, cache=None))
            found.append(Server(name, "http", caller(client), path, judged=n < 2, pid=running.pid))
        yield found


async def measure(found: list[Server], rounds: int, warmup: int) -> list[str]:
    """Warm up and check every server, truncate the audit files, then time interleaved rounds."""
    expected: list[str] | None = None
    for server in found:
        for _ in range(warmup):
            answer = students(await server.call())
        expected = expected or answer
        if answer != expected:
            raise RuntimeError(f"{server.name}: another answer than {found[0].name}'s")
    common.log(f"timing {rounds} rounds x {len(found)} servers")
    for n in range(rounds):
        for server in common.rotated(found, n):
            started = time.perf_counter()
            result = await server.call()
            server.samples.append((time.perf_counter() - started) * 1000)
            if students(result) != expected:
                raise RuntimeError(f"{server.name}: another answer in round {n}")
    assert expected is not None
    return expected


async def closed_loop(server: Server, expected: list[str], concurrency: int, seconds: float) -> tuple[int, float]:
    """`concurrency` tasks, each calling `server` again as soon as its answer (checked) is in, for `seconds`; calls
    still in flight at the end finish and count. Returns (calls, seconds)."""
    calls, started, cpu = 0, time.perf_counter(), common.cpu_ms(server.pid) if server.pid else 0.0
    deadline = started + seconds

    async def worker() -> None:
        nonlocal calls
        while time.perf_counter() < deadline:
            if students(await server.call()) != expected:
                raise RuntimeError(f"{server.name}: another answer under load")
            calls += 1

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    server.slices.append((calls, time.perf_counter() - started))
    server.cpu_ms += common.cpu_ms(server.pid) - cpu if server.pid else 0.0
    return server.slices[-1]


def unaudited(found: list[Server], server: Server) -> Server:
    [base] = [s for s in found if s.pair == server.pair and s.audit_file is None]
    return base


async def throughput(found: list[Server], expected: list[str], args: argparse.Namespace) -> None:
    """Each round, each audited server in ABBA order beside its pair's unaudited server (see the module doc)."""
    audited = [s for s in found if s.audit_file is not None]
    common.log(f"throughput: {args.slices} rounds x {len(audited)} audited servers x ABBA of {args.slice / 2} s")
    for n in range(args.slices):
        for server in common.rotated(audited, n):
            base, half = unaudited(found, server), args.slice / 2
            slices = [await closed_loop(s, expected, args.concurrency, half) for s in (base, server, server, base)]
            off, on = (slices[0], slices[3]), slices[1:3]
            server.ratios.append(rate(sum_of(on)) / rate(sum_of(off)))


def sum_of(slices: Iterable[tuple[int, float]]) -> tuple[int, float]:
    """(calls, seconds) of several slices together."""
    pairs = list(slices)
    return sum(c for c, _ in pairs), math.fsum(s for _, s in pairs)


def check_files(found: list[Server], rounds: int, warmup: int) -> None:
    for server in found:
        if server.audit_file is None:
            continue
        intact, verdict = audit_check.verify(server.audit_file)
        lines = server.audit_file.read_bytes().count(b"\n")
        calls = rounds + warmup + sum(calls for calls, _ in server.slices)
        if not intact or lines != calls:
            raise RuntimeError(f"{server.name}: {lines} lines for {calls} calls; {verdict}")


# --- the parts of an audited call -------------------------------------------------------------------------


async def parts(folder: Path, result: CallToolResult, repeat: int) -> list[tuple[str, float, float, float]]:
    """p50, p90 and mean (µs) of each part of an audited call, alone, on the real result of `cari_anak`;
    interleaved, `repeat` rounds. (The mean shows the disk's slow fsyncs, which throughput pays.)"""
    writer = audit_log.AuditLog(folder / "audit-parts.jsonl")
    fields = {"time": audit_log.utc_now(), "event": "request", "subject": "local", "client": "bench"}
    line = {**fields, "method": "tools/call", "target": "cari_anak", "arguments": ARGUMENTS, "outcome": "ok"}
    line |= {"disclosed": sorted(students(result)), "latency_ms": 4.2}

    async def inline() -> object:
        return writer.append(line)

    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)  # what the SDK hands the middleware

    async def scanned() -> object:
        return audit.disclosed_ids("tools/call", wire)

    work: dict[str, Callable[[], Awaitable[object]]] = {
        "`append` inline (flock, write, fsync)": inline,
        "`append` through a worker thread": lambda: to_thread(writer.append, line),
        "`append_async` (as the server writes: on the loop, its fsync by Linux AIO)": lambda: writer.append_async(line),
        "a worker thread's handoff alone (no work)": lambda: to_thread(int),
        "the disclosed ids of the result's wire dict (`disclosed_ids`)": scanned,
    }
    samples: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(repeat):
        for name, part in work.items():
            started = time.perf_counter()
            await part()
            samples[name].append((time.perf_counter() - started) * 1e6)
    return [
        (name, common.percentile(taken, 50), common.percentile(taken, 90), statistics.fmean(taken))
        for name, taken in samples.items()
    ]


# --- the report -------------------------------------------------------------------------------------------


def table(found: list[Server]) -> tuple[str, bool]:
    rows = ["| server | p50 ms | p90 ms | audited / unaudited p50 | difference (ms) |", "|---|---:|---:|---:|---:|"]
    met = True
    for server in found:
        p50, p90 = common.percentile(server.samples, 50), common.percentile(server.samples, 90)
        ratio = delta = ""
        if server.audit_file is not None:
            base50 = common.percentile(unaudited(found, server).samples, 50)
            met = met and (p50 / base50 <= TARGET or not server.judged)
            ratio, delta = f"{p50 / base50:.3f}", f"{p50 - base50:+.3f}"
        rows.append(common.md_row([server.name, f"{p50:.3f}", f"{p90:.3f}", ratio, delta]))
    return "\n".join(rows), met


def rate(calls_seconds: tuple[int, float]) -> float:
    calls, seconds = calls_seconds
    return calls / seconds


def throughput_table(found: list[Server]) -> tuple[str, bool]:
    rows = ["| server | calls/s | audited / unaudited calls/s, median of rounds | 95 % interval of the median | "
            "lowest – highest round | server CPU ms/call |", "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    met = True
    for server in found:
        calls, seconds = sum_of(server.slices)
        cpu = f"{server.cpu_ms / calls:.2f}" if server.pid and calls else ""
        ratio = interval = spread = ""
        if server.ratios:
            median = statistics.median(server.ratios)
            met = met and (median >= THROUGHPUT_TARGET or not server.judged)
            low, high = median_interval(server.ratios)
            ratio, interval = f"{median:.3f}", f"{low:.3f} – {high:.3f}"
            spread = f"{min(server.ratios):.3f} – {max(server.ratios):.3f}"
        rows.append(common.md_row([server.name, f"{calls / seconds:.1f}", ratio, interval, spread, cpu]))
    return "\n".join(rows), met


def median_interval(ratios: list[float], resamples: int = 2000) -> tuple[float, float]:
    """A 95 % bootstrap interval of the median of `ratios` (seeded: the same rounds give the same interval): how far
    the run's median could be from the machine's, given how much its rounds vary."""
    draw = random.Random(0)
    medians = sorted(statistics.median(draw.choices(ratios, k=len(ratios))) for _ in range(resamples))
    return medians[int(resamples * 0.025)], medians[int(resamples * 0.975) - 1]


def report(
    found: list[Server], measured: list[tuple[str, float, float, float]], args: argparse.Namespace, wall: float
) -> str:
    latency, met = table(found)
    rates, rates_met = throughput_table(found)
    part_rows = "\n".join(f"| {name} | {p50:.1f} | {p90:.1f} | {mean:.1f} |" for name, p50, p90, mean in measured)
    code = Path(mcp_asrama.__file__).resolve().parent
    return f"""{common.preamble(args.load)}; {common.versions("mcp")}; code from `{code}`. \
{common.STUDENTS:,} demo students, SQLite; `cari_anak` {json.dumps(ARGUMENTS)}, {PROTOCOL}; \
{args.warmup} warm-up calls per server, then {args.rounds} interleaved rounds; wall time {wall:.0f} s.

Latency of one call as the caller sees it:

{latency}

Target (audited p50 <= {TARGET:g}x unaudited p50, each pair on the disk): {"MET" if met else "**MISSED**"}

Throughput at {args.concurrency} calls in flight ({args.slices} rounds; each round, each audited server beside its \
unaudited one in ABBA order, {args.slice / 2:g} s a slice):

{rates}

Target (audited / unaudited calls/s >= {THROUGHPUT_TARGET:g} at c = {args.concurrency}, each pair on the disk): \
{"MET" if rates_met else "**MISSED**"}

The parts of an audited call, each alone ({args.repeat} interleaved rounds, µs):

| part | p50 | p90 | mean |
|---|---:|---:|---:|
{part_rows}"""


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__, "150 rounds instead of 600")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 600, quick 150)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed calls per server first (default 30)")
    parser.add_argument("--repeat", type=int, default=500, help="times each part is timed alone (default 500)")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight for throughput (default 8)")
    parser.add_argument("--slice", type=float, default=2.0, help="seconds of an ABBA pair's two slices (default 2)")
    parser.add_argument("--slices", type=int, help="throughput rounds (default 10, quick 4)")
    parser.add_argument("--stdio-only", action="store_true", help="no server in this process: more rounds a minute")
    parser.add_argument("--http", action="store_true", help="a pair of MCP servers over HTTP too (many staff)")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        action="append",
        default=[],
        help="one more audited server on REV's src (stdio; HTTP too with --http)",
    )
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (150 if args.quick else 600)
    args.slices = args.slices or (4 if args.quick else 10)
    common.drop_asrama_env()  # the in-process servers read the environment
    configure_logging("WARNING")  # as the subprocesses run (--log-level WARNING)

    started, args.load = time.perf_counter(), common.load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-audit-"))
    shm = Path("/dev/shm")  # noqa: S108 - a folder of our own in it, removed at the end
    ram = Path(tempfile.mkdtemp(prefix="asrama-bench-audit-", dir=shm)) if shm.is_dir() else None
    try:
        db_url = f"sqlite:///{folder / 'asrama.db'}"
        common.fill_database(db_url)
        with contextlib.ExitStack() as sources:
            old = [(rev, sources.enter_context(common.baseline_src(rev))) for rev in args.baseline]
            async with common.data_service(folder, db_url, "WARNING") as service:
                async with servers(folder, ram, service.url, old, args.stdio_only, args.http) as found:
                    expected = await measure(found, args.rounds, args.warmup)
                    await throughput(found, expected, args)
                    result = await found[0].call()
                check_files(found, args.rounds, args.warmup)
        measured = await parts(folder, result, args.repeat)
        print(report(found, measured, args, time.perf_counter() - started))
    finally:
        for made in (folder, ram):
            if made is not None:
                shutil.rmtree(made, ignore_errors=True)
    return 0


if __name__ == "__main__":
    common.run(main)
