"""Scoped reads against full reads (issue 13, parts 1 and 5): what a musyrif or wali kelas pays for a scope.

A script, not a test (pytest never collects it). For each school size (`--sizes`, default 300, 10,000 and
100,000 students), in one run on this machine:

1. a temporary SQLite database is filled with the project's demo school (`demo.generate(date.today(),
   students=N, days=8)`, stored with `demo.insert_school`; about 5 minutes at 100k, so `--cache DIR` keeps the
   files for the next run) and the real data service is started on it as a process (`mcp-asrama service`, bearer
   token, 127.0.0.1, a free port);
2. in this process, one MCP server per principal (`build_server` with `stdio_scope`), each reached through the
   SDK's in-memory `Client` and calling the service over real HTTP through a transport that counts its requests:
   full access (the office: the baseline), 1 room (the largest), 3 rooms (the three largest), 1 class (the
   largest: ~5,556 students at 100k), and 1 room + 1 class (a two-sided scope: shown, not judged);
3. the calls: `cari_anak` {} and {"offset": 100}, `absensi_harian` for the demo's latest day, `rekap_absensi` over
   its last 7 days, `daftar_izin` {}, `progres_hafalan` {}, and `rekap_pelanggaran` and `rekap_kesehatan` over the
   last 7 days; every answer must be a result, not an error. Every principal is clinic staff too (`peran:kesehatan`),
   so `rekap_kesehatan` is the exact count of its scope over any 7 days (anyone else gets counts only for a month
   that has ended and a class seen whole, which a room scope never is). Each scoped `cari_anak` answer (total and
   page ids) is first checked against the office's answers filtered to the scope (the office's `cari_anak` per room
   or class, merged by name and id, less the room-and-class overlap). Then every call goes once to every principal:
   one that fails (e.g. on the MCP server's upstream timeout) is reported and not timed, since each try would cost
   the whole timeout;
4. timing runs on a fresh service process (a request that timed out leaves its work running in the first one);
   rounds are interleaved: every call, in an order that rotates every round, goes to every principal, in an order
   that rotates too, so noise from elsewhere on the machine hits all of them alike.

For each size, principal and call: p50 and p90 (ms), the ratio to the office's p50 for the same call and size,
the upstream requests one call made, and the calls that failed. Targets (issue 13): p50 scoped / full <= 1.2x for
one unit (1 room, 1 class) and <= 1.5x for 3 rooms, marked MET or MISSED. Prints a markdown report on stdout (each
size's table as soon as it is measured), progress on stderr; exits non-zero only on an error (a read that failed,
a wrong answer, a process that does not start).

    .venv/bin/python bench/scoped.py             # 30 rounds per size
    .venv/bin/python bench/scoped.py --quick     # 8 rounds per size
    .venv/bin/python bench/scoped.py --sizes 300,10000 --rounds 50
"""

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from sqlalchemy import func, select

import common
from mcp_asrama.runtime.logs import configure_logging
from mcp_asrama.server.app import build_server
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models.anak import Anak

SIZES = (300, 10_000, 100_000)
DAYS = 8  # a 7-day rekap fits; small enough that 100k students fill in a few minutes
PAGE = 20  # cari_anak's default limit
TARGETS = {"1 room": 1.2, "1 class": 1.2, "3 rooms": 1.5}  # p50 scoped / full, at most
OFFICE = "full access"
CLINIC = "peran:kesehatan"  # every principal may count clinic visits exactly (see 3. above)


class CountingTransport(httpx2.AsyncHTTPTransport):
    """The real HTTP transport, counting the requests sent through it."""

    def __init__(self) -> None:
        super().__init__(limits=httpx2.Limits(max_connections=50, max_keepalive_connections=20, keepalive_expiry=30.0))
        self.requests = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        return await super().handle_async_request(request)


class ToolFailed(RuntimeError):
    """A call answered with a tool error (`isError`)."""


@dataclass
class Principal:
    """One MCP server with a scope (`all`: full access), its client, and its samples (ms) and request counts."""

    name: str
    scope: list[str]
    rooms: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    client: Client | None = None
    transport: CountingTransport = field(default_factory=CountingTransport)
    samples: dict[str, list[float]] = field(default_factory=dict)
    requests: dict[str, Counter[int]] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """`tools/call` as a round trip (no client-side schema check); its structured content, or an error."""
        assert self.client is not None
        result = await common.round_trip(self.client, common.tool_call(tool, arguments))
        if result.is_error or result.structured_content is None:
            raise ToolFailed(f"{self.name}: {tool}({arguments}) failed: {common.text_of(result)[:300]}")
        return dict(result.structured_content)


@dataclass(frozen=True)
class Call:
    label: str
    tool: str
    arguments: dict[str, Any]


def calls_for(today: date) -> list[Call]:
    week = {"dari": (today - timedelta(days=6)).isoformat(), "sampai": today.isoformat()}
    return [
        Call("cari_anak {}", "cari_anak", {}),
        Call("cari_anak offset=100", "cari_anak", {"offset": 100}),
        Call("absensi_harian today", "absensi_harian", {"tanggal": today.isoformat()}),
        Call("rekap_absensi 7 days", "rekap_absensi", week),
        Call("daftar_izin {}", "daftar_izin", {}),
        Call("progres_hafalan {}", "progres_hafalan", {}),
        Call("rekap_pelanggaran 7 days", "rekap_pelanggaran", week),
        Call("rekap_kesehatan 7 days", "rekap_kesehatan", week),
    ]


def largest(db: Path, column: str, count: int) -> list[tuple[str, int]]:
    """The `count` rooms or classes (`column`) with the most students (ties: the first listed), with their sizes."""
    unit = getattr(Anak, column)
    query = select(unit, func.count()).group_by(unit).order_by(func.count().desc(), func.min(Anak.id)).limit(count)
    engine = make_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as connection:
            return [(str(name), int(n)) for name, n in connection.execute(query)]
    finally:
        engine.dispose()


def principals_of(db: Path) -> list[Principal]:
    """The principals of the benchmark: the office, and scopes of the school's largest rooms and class."""
    rooms = [name for name, _ in largest(db, "kamar", 3)]
    (klass, size), *_ = largest(db, "kelas", 1)
    common.log(f"  largest room {rooms[0]!r}, largest class {klass!r} ({size:,} students)")

    def scoped(name: str, room_names: list[str], class_names: list[str]) -> Principal:
        scope = [f"kamar:{r}" for r in room_names] + [f"kelas:{k}" for k in class_names] + [CLINIC]
        return Principal(name, scope, rooms=room_names, classes=class_names)

    return [
        Principal(OFFICE, ["all", CLINIC]),
        scoped("1 room", rooms[:1], []),
        scoped("3 rooms", rooms, []),
        scoped("1 class", [], [klass]),
        scoped("1 room + 1 class", rooms[:1], [klass]),
    ]


@contextlib.asynccontextmanager
async def connected(principals: list[Principal], service_url: str) -> AsyncIterator[None]:
    """Each principal's MCP server in process, its in-memory SDK client open."""
    async with contextlib.AsyncExitStack() as stack:
        for p in principals:
            settings = ServerSettings(
                api_url=service_url,
                api_token=common.TOKEN,
                stdio_scope=p.scope,
                rate_limit="1000000/min",
                rate_burst=1_000_000,
            )
            server = build_server(settings, transport=p.transport)
            p.client = await stack.enter_async_context(Client(server, mode="2026-07-28", cache=None))
        yield


# --- checking --------------------------------------------------------------------------------------------


async def office_rows(office: Principal, filters: dict[str, str], wanted: int) -> tuple[int, list[tuple[str, str]]]:
    """The office's total for `filters` and its first `wanted` students (name, id), page by page."""
    rows: list[tuple[str, str]] = []
    total = 0
    while True:
        answer = await office.call("cari_anak", {**filters, "limit": 100, "offset": len(rows)})
        total = answer["total"]
        rows += [(a["nama"], a["id"]) for a in answer["data"]]
        if len(rows) >= min(wanted, total) or not answer["data"]:
            return total, rows[:wanted]


async def check(office: Principal, principal: Principal, offset: int) -> None:
    """The scoped `cari_anak` page at `offset` is the office's answer filtered to the scope."""
    units = [{"kamar": r} for r in principal.rooms] + [{"kelas": k} for k in principal.classes]
    overlaps = [{"kamar": r, "kelas": k} for r in principal.rooms for k in principal.classes]
    total = 0
    merged: dict[str, tuple[str, str]] = {}
    for unit in units:
        count, rows = await office_rows(office, unit, offset + PAGE)
        total += count
        merged.update((row[1], row) for row in rows)
    for overlap in overlaps:
        total -= (await office_rows(office, overlap, 0))[0]
    expected = [row[1] for row in sorted(merged.values())[offset : offset + PAGE]]
    answer = await principal.call("cari_anak", {"offset": offset} if offset else {})
    got = [a["id"] for a in answer["data"]]
    if answer["total"] != total or got != expected:
        raise RuntimeError(
            f"{principal.name}: cari_anak offset={offset}: total {answer['total']} (office: {total}), "
            f"page {got[:3]}... (office: {expected[:3]}...)"
        )


# --- measuring -------------------------------------------------------------------------------------------


async def timed(principal: Principal, call: Call) -> None:
    """One call: its time and upstream requests when it succeeds, its message when it fails (a tool error)."""
    before = principal.transport.requests
    started = time.perf_counter()
    try:
        await principal.call(call.tool, call.arguments)
    except ToolFailed as failed:
        principal.failures.setdefault(call.label, []).append(str(failed))
        return
    principal.samples.setdefault(call.label, []).append((time.perf_counter() - started) * 1000)
    principal.requests.setdefault(call.label, Counter())[principal.transport.requests - before] += 1


async def first_pass(principals: list[Principal], calls: list[Call]) -> None:
    """Every call once per principal: one that fails is recorded and never timed (each try would cost the
    service's whole timeout and leave the service busy with it)."""
    for call in calls:
        for p in principals:
            try:
                await p.call(call.tool, call.arguments)
            except ToolFailed as failed:
                p.failures[call.label] = [str(failed)]
                common.log(f"  {failed}: not timed")


async def measure(principals: list[Principal], calls: list[Call], args: argparse.Namespace) -> None:
    for _ in range(args.warmup):
        for call in calls:
            for p in principals:
                if call.label not in p.failures:
                    with contextlib.suppress(ToolFailed):
                        await p.call(call.tool, call.arguments)
    for i in range(args.rounds):
        order = common.rotated(principals, i)
        for call in common.rotated(calls, i):
            for p in order if i % 2 == 0 else reversed(order):
                if call.label not in p.failures or p.samples.get(call.label):
                    await timed(p, call)


async def has_hafalan(principal: Principal) -> bool:
    """Whether the service keeps hafalan (asked as one room: the office's read may fail for its own reasons)."""
    try:
        await principal.call("progres_hafalan", {})
    except ToolFailed as exc:
        common.log(f"  progres_hafalan skipped: {exc}")
        return False
    return True


async def run_size(students: int, folder: Path, args: argparse.Namespace) -> tuple[list[Principal], list[Call]]:
    """One school: filled (or taken from --cache), checked, then timed on a fresh service process (a read that
    failed on its timeout leaves its work running in the first one)."""
    common.log(f"size {students:,}:")
    today = date.today()
    db = (args.cache or folder) / f"demo-{students}-{today}-{DAYS}d.db"
    db_url = common.sqlite_school(db, students, DAYS, today)
    principals = principals_of(db)
    port = common.free_port()
    async with connected(principals, f"http://127.0.0.1:{port}"):
        async with common.data_service(folder, db_url, args.log_level, port=port):
            calls = calls_for(today)
            if not await has_hafalan(principals[1]):
                calls = [c for c in calls if c.tool != "progres_hafalan"]
            for p in principals[1:]:
                for offset in (0, 100):
                    await check(principals[0], p, offset)
            common.log("  cari_anak of every scope matches the office's")
            await first_pass(principals, calls)
        async with common.data_service(folder, db_url, args.log_level, port=port):
            common.log(f"  {args.rounds} rounds x {len(calls)} calls x {len(principals)} principals")
            started = time.perf_counter()
            await measure(principals, calls, args)
            common.log(f"  timed in {time.perf_counter() - started:.1f} s")
    if args.cache is None:
        db.unlink()
    return principals, calls


# --- report ----------------------------------------------------------------------------------------------


def requests_text(counts: Counter[int] | None) -> str:
    values = sorted(counts or [])
    if not values:
        return "—"
    return str(values[0]) if len(values) == 1 else f"{values[0]}–{values[-1]}"


def table(students: int, principals: list[Principal], calls: list[Call]) -> tuple[str, list[str], list[str]]:
    """The size's markdown table, the targets it missed, and the calls that failed."""
    office = principals[0]
    lines = [
        f"**{students:,} students**",
        "",
        "| call | principal | p50 ms | p90 ms | p50 / full p50 | target | upstream requests | failed |",
        "|---|---|---:|---:|---:|---|---:|---|",
    ]
    missed, failed = [], []
    for call in calls:
        office_samples = office.samples.get(call.label)
        base = common.percentile(office_samples, 50) if office_samples else None
        for p in principals:
            samples = p.samples.get(call.label, [])
            errors = p.failures.get(call.label, [])
            p50 = common.percentile(samples, 50) if samples else None
            ratio = p50 / base if p50 is not None and base is not None else None
            if p is office:
                target = "baseline"
            elif p.name not in TARGETS:
                target = "(shown, not judged)"
            elif ratio is None:
                target = "—"
            else:
                met = ratio <= TARGETS[p.name]
                target = f"≤ {TARGETS[p.name]:g}×: " + ("MET" if met else "**MISSED**")
                if not met:
                    missed.append(f"{students:,} students, {p.name}, {call.label}: {ratio:.3f}×")
            shown = [f"{p50:.2f}" if p50 is not None else "—"]
            shown.append(f"{common.percentile(samples, 90):.2f}" if samples else "—")
            shown.append(f"{ratio:.2f}×" if ratio is not None else "—")
            failure = "0"
            if errors:
                count = f"{len(errors)}/{len(errors) + len(samples)}" if samples else "failed, not timed"
                failure = f"**{count}**: {errors[0].partition(': ')[2][:120]}"
                failed.append(f"{students:,} students, {p.name}, {call.label}")
            lines.append(
                common.md_row([call.label, p.name, *shown, target, requests_text(p.requests.get(call.label)), failure])
            )
    return "\n".join(lines), missed, failed


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__, "fewer rounds (8 instead of 30)")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="students per school, comma-separated")
    parser.add_argument("--rounds", type=int, help="timed rounds per size (default 30, quick 8)")
    parser.add_argument("--warmup", type=int, help="untimed rounds first (default 3, quick 1)")
    common.add_log_level(parser, "WARNING", "the data service process and the MCP servers in this one")
    parser.add_argument(
        "--cache", type=Path, help="keep each filled database in this folder and reuse it (by size, date and days)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",")]
    args.rounds = args.rounds or (8 if args.quick else 30)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.quick else 3)
    configure_logging(args.log_level)
    common.drop_asrama_env()  # the servers in process: only our settings

    started, load_before = time.perf_counter(), common.load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-scoped-"))
    os.environ["XDG_DATA_HOME"] = str(folder)
    print(
        f"""{common.preamble()}; {common.versions("mcp", "httpx2")}. Demo school, {DAYS} days of attendance, \
SQLite, the data service a process; MCP servers in process (in-memory SDK client, protocol 2026-07-28), one \
per principal; {args.warmup} warm-up and {args.rounds} timed rounds per size, interleaved; log level \
{args.log_level}. Each size's table is printed when it is measured.""",
        flush=True,
    )
    missed, failed = [], []
    try:
        for students in sizes:
            principals, calls = await run_size(students, folder, args)
            report, misses, failures = table(students, principals, calls)
            print(f"\n{report}", flush=True)
            missed += misses
            failed += failures
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    verdict = "all MET" if not missed else "**MISSED**: " + "; ".join(missed)
    print(f"""
Targets (p50 scoped / full: 1 room and 1 class ≤ 1.2×, 3 rooms ≤ 1.5×): {verdict}

Reads that failed: {"; ".join(failed) if failed else "none"}.

Load average (1/5/15 min) {load_before} before and {common.load()} after; \
wall time {time.perf_counter() - started:.0f} s.""")
    common.log("all targets met" if not missed else f"MISSED: {len(missed)} (see the report)")
    if failed:
        common.log(f"error: {len(failed)} reads failed (see the report)")
    return 1 if failed else 0


if __name__ == "__main__":
    common.run(main, trace=True)
