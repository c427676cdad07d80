"""A 30-student roll call through the MCP server over HTTP (both rounds), against the same bulk write sent
straight to the service.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the project's demo school (bench/common.py's `fill_database`: 1,000
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
     the service for another room of the same size. `yang_lain` fills only the students without a record that
     day or recorded `hadir`, so each call of the two room routes writes a day of its own without records (from
     60 days back, one day further each call): every call records the whole room anew.
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
import contextlib
import itertools
import secrets
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp_types import CallToolResult, ElicitRequestParams, ElicitResult, InputRequiredResult

import common

ROLL = 30  # students in the judged roll call
TARGET = 2.5  # MCP p50 / direct p50, at most
PROTOCOL = "2026-07-28"
STATUSES = ("alpa", "hadir")  # every call of a route moves its students to the other one
CLASSES = ("7A", "7B")  # the direct route's 30 students come from the first, the MCP route's from the second
EXCEPTION = {"status": "izin", "keterangan": "Pulang, acara keluarga"}  # "... kecuali <one student> izin"
ACTOR = "bench"


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


def fresh_days(today: date) -> Callable[[], date]:
    """Days without records (before the demo's 30), one further back each call."""
    back = itertools.count(60)
    return lambda: today - timedelta(days=next(back))


def direct_route(
    name: str,
    http: httpx2.AsyncClient,
    day: Callable[[], date],
    rows: Callable[[str], list[dict[str, Any]]],
    expect: int,
) -> Route:
    async def call(status: str) -> int:
        headers = {"Idempotency-Key": f"bench-{secrets.token_urlsafe(24)}", "X-Asrama-Actor": ACTOR}
        response = await http.post(f"/absensi/{day().isoformat()}", json={"entri": rows(status)}, headers=headers)
        body: dict[str, Any] = response.raise_for_status().json()
        return int(body["baru"]) + int(body["diubah"])

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
    return int(found["baru"]) + int(found["diubah"])


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
    """CPU time (ms) used so far by this process (the caller) and by each server process (`common.cpu_ms`: one
    call's reading is coarse, the mean over many calls is not biased)."""

    def __init__(self) -> None:
        self.pids: dict[str, int] = {}

    def read(self) -> dict[str, float]:
        return {"caller": time.process_time() * 1000} | {name: common.cpu_ms(pid) for name, pid in self.pids.items()}


@contextlib.asynccontextmanager
async def servers(folder: Path, args: argparse.Namespace) -> AsyncIterator[tuple[httpx2.AsyncClient, str, Meter]]:
    """The data service and the MCP HTTP server (its write tools on) as processes; yields a client of the service,
    the MCP URL and a meter of the processes' CPU time."""
    db_url = f"sqlite:///{folder / 'asrama.db'}"
    common.fill_database(db_url)
    meter = Meter()
    async with common.data_service(folder, db_url, args.log_level) as service:
        env = common.server_env(folder, service.url, ASRAMA_WRITES="on")
        async with (
            common.mcp_http_server(folder, env, args.log_level) as mcp,
            common.direct_client(service.url) as http,
        ):
            meter.pids = {"MCP server": mcp.pid, "service": service.pid}
            yield http, f"{mcp.url}/mcp", meter


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
            f"direct `POST /absensi`, {ROLL} entries", http, lambda: day, lambda s: roll(cast.direct, s), expect=ROLL
        )
        room_direct = direct_route(
            f"direct `POST /absensi`, room of {size} (1 izin + {size - 1}), a new day each call",
            http,
            fresh_days(day),
            lambda s: room_rows(ids_d, s),
            expect=size,
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
        mcp_day = fresh_days(day)
        room_mcp = mcp_route(
            f"MCP HTTP `catat_absensi(kamar, yang_lain)`, room of {size}, a new day each call, both rounds",
            client,
            confirmer,
            day,
            lambda s: {"kamar": room_m, "yang_lain": s, "entri": [exception], "tanggal": mcp_day().isoformat()},
            size,
            expect=size,
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
    common.log(f"timing {args.iterations} rounds x {len(all_routes)} routes")
    for i in range(args.iterations):
        for route in common.rotated(all_routes, i):
            await timed(route, meter)
        if (i + 1) % 50 == 0:
            common.log(f"  {i + 1} rounds")


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
        p50 = common.percentile(route.samples, 50)
        base = common.percentile(by_name[route.baseline].samples, 50) if route.baseline else p50
        ratio = f"{p50 / base:.2f}×"
        if route.baseline is None:
            judgement = "baseline"
        elif route.judged:
            judged_ratio, met = p50 / base, p50 <= TARGET * base
            ratio, judgement = f"**{ratio}**", common.verdict(met)
        else:
            judgement = "(shown, not judged)"
        n = len(route.samples)
        cpu = " / ".join(f"{route.cpu[p] / n:.1f}" if p in route.cpu else "–" for p in PROCESSES)
        cells = [route.name, str(route.students), f"{p50:.2f}", f"{common.percentile(route.samples, 99):.2f}"]
        cells += [f"{p50 - base:+.2f}", ratio, judgement, cpu, str(n)]
        lines.append(common.md_row(cells))
    return "\n".join(lines), judged_ratio, met


def report(
    all_routes: list[Route], cast: Cast, args: argparse.Namespace, wall: float, load_before: str
) -> tuple[str, bool]:
    latency, ratio, met = table(all_routes)
    judged = next(r for r in all_routes if r.judged)
    rooms = f"rooms {cast.room_direct[0]} (direct) and {cast.room_mcp[0]} (MCP)"
    lines = [
        f"{common.preamble(load_before)}; {common.versions('mcp', 'httpx2', 'uvicorn')}. "
        f"{common.STUDENTS:,} demo students, SQLite; log level {args.log_level} in both server processes; "
        f"{args.warmup} warm-up calls per route, then {args.iterations} interleaved rounds; wall time {wall:.0f} s. "
        f"Students: {ROLL} of class {CLASSES[0]} (direct) and {ROLL} of {CLASSES[1]} (MCP); {rooms}.",
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
    parser = common.parser(__doc__, "50 timed rounds and 6 warm-up calls per route")
    parser.add_argument("--iterations", type=int, default=None, help="timed rounds (200; with --quick 50)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed calls per route first (20; with --quick 6)")
    common.add_log_level(parser, "INFO", "both servers")
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (50 if args.quick else 200)
    args.warmup = args.warmup if args.warmup is not None else (6 if args.quick else 20)
    return args


async def main(argv: list[str] | None = None) -> int:
    args = options(argv)
    began, load_before = time.perf_counter(), common.load()
    day = date.today()  # the demo's last day: every student has a record, so each write changes records
    with tempfile.TemporaryDirectory(prefix="asrama-bench-rollcall-", ignore_cleanup_errors=True) as tmp:
        async with (
            servers(Path(tmp), args) as (http, mcp_url, meter),
            routes(http, mcp_url, day) as (cast, all_routes),
        ):
            await measure(all_routes, meter, args)
    text, met = report(all_routes, cast, args, time.perf_counter() - began, load_before)
    print(text)
    common.log("target met" if met else "MISSED: the target (see the report)")
    return 0


if __name__ == "__main__":
    common.run(main)
