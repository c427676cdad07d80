"""A 30-student roll call through the MCP server over HTTP (both rounds), against the same bulk write sent
straight to the service.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the project's demo school (bench/mcp.py's `fill_database`: 1,000
   students, 30 days of attendance up to today) and the real data service is started on it as a process of its
   own (`mcp-asrama service`, bearer token required, 127.0.0.1, a free port); the MCP server runs as
   `mcp-asrama serve --transport http` (stateless Streamable HTTP, 127.0.0.1, a free port) with
   `ASRAMA_WRITES=on`, so it has `catat_absensi`;
2. every call writes today's roll call and changes every student it names, and each route has its own students,
   so no route's call undoes another's: a route sends all its students `alpa`, its next call all `hadir`, and so
   on. The students are 30 of one class each, none with an izin running today. The routes:
   - `direct` (the baseline): `POST /absensi/{today}` with the 30 entries, a new `Idempotency-Key` on every call
     (a repeated key would replay the stored answer and write nothing) and `X-Asrama-Actor`, over one keep-alive
     `httpx2.AsyncClient`; the answer must say 30 `diubah`;
   - `MCP HTTP` (held to the target): `catat_absensi(tanggal, entri=[30 entries])` with the SDK's
     `Client.call_tool` on protocol 2026-07-28, which drives both rounds itself: the first `tools/call` answers
     `input_required` (the question), the client's elicitation callback accepts, and the client sends the call
     again with the answer and the `requestState`; the second answer must be `hasil: "ditulis"` with 30 `diubah`.
     One sample is the whole `call_tool`, both rounds;
   - shown beside them, not held to the target: the first round alone (`session.call_tool(...,
     allow_input_required=True)`: the plan and the question, nothing written), and "semua hadir kecuali ..."
     for one room (`kamar` + `yang_lain`, one student named as `izin`) against the same rows sent straight to
     the service for another room of the same size.
   Each route is warmed up first; then the routes are interleaved call by call, the order rotating every round,
   so noise from elsewhere on the machine hits all of them alike;
3. beside the latency, the mean CPU time a call costs in each process (the caller, the MCP server, the service;
   on Linux, from /proc), which the machine's load does not inflate the way it does wall time.

Prints a markdown report on stdout, progress on stderr. Exits non-zero only on an error (a call that fails or
writes something else than planned, a process that does not start); a missed target is printed as MISSED.

    .venv/bin/python bench/rollcall.py            # 200 timed rounds (one to three minutes)
    .venv/bin/python bench/rollcall.py --quick    # 50 rounds
"""

import argparse
import asyncio
import contextlib
import importlib.util
import os
import platform
import secrets
import shlex
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any


def _bench_mcp() -> ModuleType:
    """bench/latency.py, for its helpers. `bench` is no package, and under its own name the file would shadow the SDK;
    loading it also drops this folder from sys.path (its first statement), so `import mcp` below is the SDK."""
    spec = importlib.util.spec_from_file_location("bench_mcp", Path(__file__).with_name("latency.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


helpers = _bench_mcp()

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.session import ClientRequestContext  # noqa: E402
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, InputRequiredResult  # noqa: E402

log, percentile, free_port, process, wait_listening = (
    helpers.log,
    helpers.percentile,
    helpers.free_port,
    helpers.process,
    helpers.wait_listening,
)

TOKEN = secrets.token_urlsafe(16)
ROLL = 30  # students in the judged roll call
TARGET = 2.5  # MCP p50 / direct p50, at most
PROTOCOL = "2026-07-28"
STATUSES = ("alpa", "hadir")  # every call of a route moves its students to the other one
CLASSES = ("7A", "7B")  # the direct route's 30 students come from the first, the MCP route's from the second
EXCEPTION = {"status": "izin", "keterangan": "Pulang, acara keluarga"}  # "... kecuali <one student> izin"
ACTOR = "bench"
# The write tools on; and the rate limit out of the way, since one caller sends every request (speed, not throttling).
MCP_SETTINGS = {"ASRAMA_WRITES": "on", "ASRAMA_RATE_LIMIT": "1000000/min", "ASRAMA_RATE_BURST": "1000000"}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


@dataclass
class Route:
    """A way to write a roll call, the students it owns, and its samples (ms).

    `call(status)` sends the route's students to `status` and returns how many records changed; `expect` is how
    many every timed call must change; `baseline` names the route its ratio is taken against (None: a baseline).
    """

    name: str
    students: int
    call: Callable[[str], Awaitable[int]]
    expect: int
    baseline: str | None = None
    judged: bool = False
    calls: int = 0
    samples: list[float] = field(default_factory=list)
    cpu: Counter[str] = field(default_factory=Counter)  # CPU ms per process, summed over the timed calls

    async def run(self) -> int:
        status = STATUSES[self.calls % len(STATUSES)]
        self.calls += 1
        return await self.call(status)


# --- data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cast:
    """Who each route writes: two sets of 30 students (one class each) and two rooms of the same size."""

    direct: list[str]
    mcp: list[str]
    room_direct: tuple[str, list[str]]
    room_mcp: tuple[str, list[str]]


async def pick(http: httpx2.AsyncClient, day: date) -> Cast:
    """Students from the service's own answers: none with an izin running on `day` (a room's roll call keeps them
    `izin`, which would make the two rooms' work differ), no student in two routes."""
    leave = (await http.get("/izin", params={"tanggal": day.isoformat(), "limit": 500})).raise_for_status().json()
    away = {i["id_anak"] for i in leave["data"]}
    everyone = await http.get("/absensi", params={"tanggal": day.isoformat(), "semua_anak": "true"})
    rows = everyone.raise_for_status().json()["data"]
    rooms: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        rooms[row["kamar"]].append(row["id_anak"])
    clean = sorted((k, ids) for k, ids in rooms.items() if not away & set(ids))
    sizes = Counter(len(ids) for _, ids in clean)
    size = max((n for n, count in sizes.items() if count >= 2), default=0)
    if not size:
        raise RuntimeError("no two rooms of the same size without a running izin")
    room_direct, room_mcp = [(k, ids) for k, ids in clean if len(ids) == size][:2]
    taken = away | set(room_direct[1]) | set(room_mcp[1])
    chosen = []
    for kelas in CLASSES:
        ids = [r["id_anak"] for r in rows if r["kelas"] == kelas and r["id_anak"] not in taken][:ROLL]
        if len(ids) < ROLL:
            raise RuntimeError(f"class {kelas} has fewer than {ROLL} students outside the rooms and izin")
        chosen.append(ids)
    return Cast(direct=chosen[0], mcp=chosen[1], room_direct=room_direct, room_mcp=room_mcp)


def roll(ids: list[str], status: str) -> list[dict[str, Any]]:
    return [{"id_anak": i, "status": status} for i in ids]


def room_rows(ids: list[str], status: str) -> list[dict[str, Any]]:
    """What `catat_absensi(kamar=..., yang_lain=status, entri=[first student izin])` writes for a room."""
    return [{"id_anak": ids[0], **EXCEPTION}, *roll(ids[1:], status)]


# --- routes ----------------------------------------------------------------------------------------------


def direct_route(
    name: str, http: httpx2.AsyncClient, day: date, rows: Callable[[str], list[dict[str, Any]]], expect: int
) -> Route:
    async def call(status: str) -> int:
        headers = {"Idempotency-Key": f"bench-{secrets.token_urlsafe(24)}", "X-Asrama-Actor": ACTOR}
        response = await http.post(f"/absensi/{day.isoformat()}", json={"entri": rows(status)}, headers=headers)
        body: dict[str, Any] = response.raise_for_status().json()
        return int(body["diubah"])

    return Route(name, len(rows(STATUSES[0])), call, expect)


class Confirmer:
    """The person: accepts every question, and counts them (each MCP write must ask exactly once)."""

    def __init__(self) -> None:
        self.asked = 0

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        if not params.message.startswith("Catat absensi"):
            raise RuntimeError(f"unexpected question: {params.message[:200]}")
        self.asked += 1
        return ElicitResult(action="accept", content={"setuju": True})


def _written(name: str, result: CallToolResult) -> int:
    found = result.structured_content or {}
    if result.is_error or found.get("hasil") != "ditulis":
        raise RuntimeError(f"{name}: catat_absensi did not write: {found or result.content}")
    return int(found["diubah"])


def mcp_route(
    name: str,
    client: Client,
    confirmer: Confirmer,
    day: date,
    arguments: Callable[[str], dict[str, Any]],
    size: int,
    expect: int,
) -> Route:
    """One whole `Client.call_tool`: the question, the callback's accept, the retry, the written result."""

    async def call(status: str) -> int:
        before = confirmer.asked
        result = await client.call_tool("catat_absensi", {"tanggal": day.isoformat(), **arguments(status)})
        if confirmer.asked != before + 1:
            raise RuntimeError(f"{name}: asked {confirmer.asked - before} times for one write")
        return _written(name, result)

    return Route(name, size, call, expect)


def question_route(name: str, client: Client, day: date, ids: list[str]) -> Route:
    """The first round alone: plan and question, nothing written (so the students stay as they are, and each call
    asks again: the route sends them to a status they do not have)."""

    async def call(status: str) -> int:
        arguments = {"tanggal": day.isoformat(), "entri": roll(ids, "sakit")}
        result = await client.session.call_tool("catat_absensi", arguments, allow_input_required=True)
        if not isinstance(result, InputRequiredResult) or not result.input_requests:
            raise RuntimeError(f"{name}: the first round did not ask: {result}")
        return 0

    return Route(name, len(ids), call, expect=0)  # nothing is written


class Meter:
    """CPU time (ms) used so far by this process (the caller) and by each server process, all threads.

    The servers' is user + system time from Linux's /proc/<pid>/stat, which keeps the time of threads that have
    ended (a thread pool's idle workers do end); it counts in clock ticks (10 ms), so one call's reading is coarse
    but the mean over many calls is not biased. Elsewhere only the caller's is known."""

    def __init__(self) -> None:
        self.pids: dict[str, int] = {}
        self.tick_ms = 1000 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.0

    def read(self) -> dict[str, float]:
        used = {"caller": time.process_time() * 1000}
        for name, pid in self.pids.items():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                used[name] = (int(fields[11]) + int(fields[12])) * self.tick_ms  # utime, stime
        return used


@contextlib.asynccontextmanager
async def servers(folder: Path, args: argparse.Namespace) -> AsyncIterator[tuple[httpx2.AsyncClient, str, Meter]]:
    """The data service and the MCP HTTP server as processes; yields a client of the service, the MCP URL and a
    meter of the processes' CPU time."""
    base = [helpers.EXECUTABLE, "--log-level", args.log_level]
    db_url = f"sqlite:///{folder / 'asrama.db'}"
    started = time.perf_counter()
    rows = helpers.fill_database(db_url)
    log(f"database: {helpers.STUDENTS:,} students, {rows:,} attendance rows in {time.perf_counter() - started:.1f} s")
    service_port, mcp_port = free_port(), free_port()
    service_url = f"http://127.0.0.1:{service_port}"
    mcp_env = helpers.clean_env(folder, ASRAMA_API_URL=service_url, ASRAMA_API_TOKEN=TOKEN, **MCP_SETTINGS)
    service_env = helpers.clean_env(folder, ASRAMA_SERVICE_TOKEN=TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"}
    service_log, mcp_log = folder / "service.log", folder / "mcp-http.log"
    service_command = [*base, "service", "--host", "127.0.0.1", "--port", str(service_port), "--db", db_url]
    mcp_command = [*base, "serve", "--transport", "http", "--port", str(mcp_port)]
    meter = Meter()
    with (
        process(service_command, service_env, service_log) as service,
        process(mcp_command, mcp_env, mcp_log) as mcp_http,
    ):
        await wait_listening(service_port, service, service_log)
        await wait_listening(mcp_port, mcp_http, mcp_log)
        meter.pids = {"MCP server": mcp_http.pid, "service": service.pid}
        async with httpx2.AsyncClient(base_url=service_url, headers=headers) as http:
            yield http, f"http://127.0.0.1:{mcp_port}/mcp", meter


@contextlib.asynccontextmanager
async def routes(http: httpx2.AsyncClient, mcp_url: str, day: date) -> AsyncIterator[tuple[Cast, list[Route]]]:
    """The five routes, over one service client and one SDK client of the MCP server."""
    cast = await pick(http, day)
    confirmer = Confirmer()
    async with Client(mcp_url, mode=PROTOCOL, cache=None, elicitation_callback=confirmer) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        if "catat_absensi" not in tools:
            raise RuntimeError(f"the MCP server has no catat_absensi (ASRAMA_WRITES=on?): {sorted(tools)}")
        (_, ids_d), (room_m, ids_m) = cast.room_direct, cast.room_mcp
        size = len(ids_d)
        exception = {"id_anak": ids_m[0], **EXCEPTION}
        direct = direct_route(
            f"direct `POST /absensi`, {ROLL} entries", http, day, lambda s: roll(cast.direct, s), expect=ROLL
        )
        room_direct = direct_route(
            f"direct `POST /absensi`, room of {size} (1 izin + {size - 1})",
            http,
            day,
            lambda s: room_rows(ids_d, s),
            expect=size - 1,  # the izin student's record is the same on every call
        )
        mcp = mcp_route(
            f"MCP HTTP `catat_absensi`, {ROLL} entries, both rounds",
            client,
            confirmer,
            day,
            lambda s: {"entri": roll(cast.mcp, s)},
            ROLL,
            expect=ROLL,
        )
        room_mcp = mcp_route(
            f"MCP HTTP `catat_absensi(kamar, yang_lain)`, room of {size}, both rounds",
            client,
            confirmer,
            day,
            lambda s: {"kamar": room_m, "yang_lain": s, "entri": [exception]},
            size,
            expect=size - 1,
        )
        first = question_route(f"MCP HTTP, first round only ({ROLL} entries: plan + question)", client, day, cast.mcp)
        mcp.judged = True
        mcp.baseline = first.baseline = direct.name
        room_mcp.baseline = room_direct.name
        yield cast, [direct, mcp, first, room_direct, room_mcp]


# --- measuring -------------------------------------------------------------------------------------------


async def timed(route: Route, meter: Meter | None) -> None:
    """One call; with a meter, checked (it changed what it should), timed, and its CPU time counted."""
    before = meter.read() if meter else {}
    started = time.perf_counter()
    changed = await route.run()
    elapsed = (time.perf_counter() - started) * 1000
    if meter is None:
        return
    after = meter.read()
    if changed != route.expect:
        raise RuntimeError(f"{route.name}: changed {changed} records, expected {route.expect}")
    route.samples.append(elapsed)
    route.cpu.update({k: after[k] - before[k] for k in after.keys() & before.keys()})


async def measure(all_routes: list[Route], meter: Meter, args: argparse.Namespace) -> None:
    """Warm every route up (its first calls may change fewer records: the demo's own statuses), then time
    interleaved rounds, the order rotating every round."""
    for route in all_routes:
        for _ in range(args.warmup):
            await timed(route, None)
    log(f"timing {args.iterations} rounds x {len(all_routes)} routes")
    for i in range(args.iterations):
        shift = i % len(all_routes)
        for route in all_routes[shift:] + all_routes[:shift]:
            await timed(route, meter)
        if (i + 1) % 50 == 0:
            log(f"  {i + 1} rounds")


# --- report ----------------------------------------------------------------------------------------------

PROCESSES = ("caller", "MCP server", "service")


def table(all_routes: list[Route]) -> tuple[str, float, bool]:
    """The latency table; the judged route's ratio and whether it met the target."""
    by_name = {r.name: r for r in all_routes}
    lines = [
        f"| route | students | p50 ms | p99 ms | p50 − baseline p50 (ms) | p50 / baseline p50 | target ≤ {TARGET:g}× "
        "| CPU ms per call: caller / MCP server / service | n |",
        "|---|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    judged_ratio, met = 0.0, True
    for route in all_routes:
        p50 = percentile(route.samples, 50)
        base = percentile(by_name[route.baseline].samples, 50) if route.baseline else p50
        ratio = f"{p50 / base:.2f}×"
        if route.baseline is None:
            verdict = "baseline"
        elif route.judged:
            judged_ratio, met = p50 / base, p50 <= TARGET * base
            ratio, verdict = f"**{ratio}**", helpers.verdict(met)
        else:
            verdict = "(shown, not judged)"
        n = len(route.samples)
        cpu = " / ".join(f"{route.cpu[p] / n:.1f}" if p in route.cpu else "–" for p in PROCESSES)
        row = [route.name, str(route.students), f"{p50:.2f}", f"{percentile(route.samples, 99):.2f}"]
        row += [f"{p50 - base:+.2f}", ratio, verdict, cpu, str(n)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), judged_ratio, met


def setting(load_before: str) -> str:
    """The machine and the versions the numbers were taken on."""
    parts = [
        f"{os.cpu_count()} CPUs (`nproc`)",
        f"load average (1/5/15 min) {load_before} before and {helpers.load()} after",
        " ".join([platform.python_implementation(), platform.python_version(), "on", *platform.uname()[::4]]),
        ", ".join(f"{package} {version(package)}" for package in ("mcp", "httpx2", "uvicorn")),
    ]
    return "; ".join(parts)


def report(all_routes: list[Route], cast: Cast, args: argparse.Namespace, wall: float, setup: str) -> tuple[str, bool]:
    latency, ratio, met = table(all_routes)
    judged = next(r for r in all_routes if r.judged)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    invocation = shlex.join([".venv/bin/python", "bench/rollcall.py", *sys.argv[1:]])
    rooms = f"rooms {cast.room_direct[0]} (direct) and {cast.room_mcp[0]} (MCP)"
    lines = [
        f"Run {when}: `{invocation}`. {setup}. {helpers.STUDENTS:,} demo students, SQLite; log level "
        f"{args.log_level} in both server processes; {args.warmup} warm-up calls per route, then {args.iterations} "
        f"interleaved rounds; wall time {wall:.0f} s. Students: {ROLL} of class {CLASSES[0]} (direct) and {ROLL} of "
        f"{CLASSES[1]} (MCP); {rooms}.",
        "",
        "Latency of one roll call as the caller sees it (ms; an MCP call is both rounds; CPU is the mean per call):",
        "",
        latency,
        "",
        f"Target ({judged.name}: p50 ≤ {TARGET:g}× the direct write's p50): {ratio:.2f}×, "
        + ("MET" if met else "**MISSED**"),
    ]
    return "\n".join(lines), met


def options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="50 timed rounds and 6 warm-up calls per route")
    parser.add_argument("--iterations", type=int, default=None, help="timed rounds (200; with --quick 50)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed calls per route first (20; with --quick 6)")
    parser.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, default="INFO", help="of both servers")
    args = parser.parse_args(argv)
    defaults = {"iterations": 50, "warmup": 6} if args.quick else {"iterations": 200, "warmup": 20}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


async def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    began, load_before = time.perf_counter(), helpers.load()
    day = date.today()  # the demo's last day: every student has a record, so each write changes records
    with tempfile.TemporaryDirectory(prefix="asrama-bench-rollcall-", ignore_cleanup_errors=True) as tmp:
        async with (
            servers(Path(tmp), args) as (http, mcp_url, meter),
            routes(http, mcp_url, day) as (cast, all_routes),
        ):
            await measure(all_routes, meter, args)
    text, met = report(all_routes, cast, args, time.perf_counter() - began, setting(load_before))
    print(text)
    log("target met" if met else "MISSED: the target (see the report)")
    return 0


if __name__ == "__main__":
    code = 1
    try:
        code = asyncio.run(main())
    except Exception as exc:  # a failed call or process makes every number meaningless: say which, exit 1
        log(f"error: {type(exc).__name__}: {exc}")
    sys.exit(code)
