"""Every office-wide read of a large school (issue 24, item 1): through the MCP server against the same requests sent
straight to the data service, interleaved.

A script, not a test. For each school size (`--sizes`, default 100,000 students):

1. the demo school (`demo.generate(date.today(), students=N, days=31)`) is stored in a SQLite file
   (`common.sqlite_school`; `--cache DIR` keeps it for the next run), or, when `ASRAMA_BENCH_PG_URL` names an
   empty PostgreSQL database (a SQLAlchemy URL, kept out of the report), in that database (`common.fill_database`,
   plus the violations, deposits and visits it leaves out; left filled, and reused by the next run of the same size
   the same day; no running izin there);
2. the data service of revision `--rev` (default HEAD: edits in progress in the tree change nothing) runs as a
   process on it (`python -m mcp_asrama service`, bearer token, 127.0.0.1); the office's MCP
   server (`all`, plus `peran:kesehatan` so that health counts are exact over any month) runs in this process,
   reached through the SDK's in-memory client, calling the service over real HTTP through a transport that
   records every request it sends (path, query, answer size);
3. the reads: `progres_hafalan` {}, `rekap_absensi` over the last 30 days, `absensi_harian` of the latest day for
   the whole school, `cari_anak` of the school's most common first name, `rekap_pelanggaran` and
   `rekap_kesehatan` over the last 30 days, `daftar_izin` {aktif: true}. Each is called once through the MCP
   server (it must answer a result, not a tool error, else it is reported and not timed): the requests it sent
   are "the same request straight to the service", replayed one after another by a keep-alive client;
4. the timed rounds interleave: every read, in an order that rotates each round, through the MCP server and
   straight to the service, which one first alternating by round.

Per size and read: p50 and p90 (ms) through the MCP server and straight to the service, their ratio, the upstream
requests and the bytes the service sent the MCP server per call, and whether the service's p90 is under 1 s (the
issue's target) and the MCP p90 well inside the upstream timeout (half of it). Prints a markdown report on stdout,
progress on stderr; exits non-zero when a read failed.

    .venv/bin/python bench/scale.py --cache /tmp/scale                   # 100,000 students, SQLite
    .venv/bin/python bench/scale.py --sizes 10000 --rounds 10 --cache /tmp/scale
    ASRAMA_BENCH_PG_URL=postgresql+psycopg://user@host/empty_db .venv/bin/python bench/scale.py --sizes 10000
"""

import argparse
import contextlib
import os
import shutil
import sys
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
from sqlalchemy import func, insert, inspect, select, text

import common
from mcp_asrama.runtime.logs import configure_logging
from mcp_asrama.server.app import build_server
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.service import demo
from mcp_asrama.service.crud import hafalan as crud_hafalan
from mcp_asrama.service.crud import pelanggaran as crud_pelanggaran
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models import Absensi, Anak, Hafalan, KunjunganKlinik, Pelanggaran

DAYS = 31  # a 30-day rekap fits
TIMEOUT_S = ServerSettings.model_fields["api_timeout"].default  # the MCP server's upstream timeout
SERVICE_TARGET_MS = 1000.0
PG_ENV = "ASRAMA_BENCH_PG_URL"  # an empty PostgreSQL database (SQLAlchemy URL): read it instead of a SQLite file


class RecordingTransport(httpx2.AsyncHTTPTransport):
    """The real HTTP transport, keeping the path and query of every request and its answer's declared size."""

    def __init__(self) -> None:
        super().__init__(limits=httpx2.Limits(max_connections=50, max_keepalive_connections=20, keepalive_expiry=30.0))
        self.sent: list[tuple[str, int]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await super().handle_async_request(request)
        self.sent.append((request.url.raw_path.decode(), int(response.headers.get("content-length", 0))))
        return response


@dataclass
class Read:
    label: str
    tool: str
    arguments: dict[str, Any]
    upstream: list[str] = field(default_factory=list)  # the requests one call sent, replayed straight
    bytes_in: int = 0
    mcp: list[float] = field(default_factory=list)
    direct: list[float] = field(default_factory=list)
    failure: str | None = None


def common_first_name(db_url: str) -> str:
    """The school's most common first name (a `cari_anak` that matches many students)."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as connection:
            names = Counter(str(n).split()[0] for n in connection.scalars(select(Anak.nama)))
    finally:
        engine.dispose()
    return names.most_common(1)[0][0]


def filled_for(db_url: str, students: int, today: date) -> bool:
    """Whether the database already holds this run's school (`students`, attendance up to `today`, deposits): a
    previous run's, kept since it is left filled. An empty database (no tables yet) is not."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as connection:
            if not inspect(connection).has_table("absensi"):
                return False
            held = connection.scalar(select(func.count()).select_from(Anak))
            last = connection.scalar(select(func.max(Absensi.tanggal)))
            deposits = connection.scalar(select(func.count()).select_from(Hafalan))
    finally:
        engine.dispose()
    return held == students and last == today and bool(deposits)


def records_for_postgresql(db_url: str, students: int, today: date) -> None:
    """What `common.fill_database` leaves out on PostgreSQL (it copies students, rooms and attendance): the demo's
    kinds of violation, violations, deposits and clinic visits, as `demo.insert_school` stores them."""
    school = demo.generate(today, students=students, days=DAYS)
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as session:
            crud_pelanggaran.ensure_default_jenis(session)
            tables = ((Pelanggaran, school.pelanggaran()), (Hafalan, school.hafalan()))
            for table, rows in (*tables, (KunjunganKlinik, school.kesehatan())):
                session.execute(insert(table), list(rows))
            crud_hafalan.rebuild(session)
            session.commit()
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(text("VACUUM ANALYZE"))  # what autovacuum does within minutes of a bulk load
    finally:
        engine.dispose()


def reads_for(today: date, nama: str) -> list[Read]:
    month = {"dari": (today - timedelta(days=29)).isoformat(), "sampai": today.isoformat()}
    return [
        Read("progres_hafalan()", "progres_hafalan", {}),
        Read("rekap_absensi 30 days", "rekap_absensi", month),
        Read("absensi_harian whole school", "absensi_harian", {"tanggal": today.isoformat()}),
        Read(f"cari_anak(nama={nama!r})", "cari_anak", {"nama": nama}),
        Read("rekap_pelanggaran 30 days", "rekap_pelanggaran", month),
        Read("rekap_kesehatan 30 days", "rekap_kesehatan", month),
        Read("daftar_izin(aktif=true)", "daftar_izin", {"aktif": True}),
    ]


@contextlib.asynccontextmanager
async def service_of(src: Path, db_url: str, folder: Path) -> AsyncIterator[httpx2.AsyncClient]:
    """`python -m mcp_asrama service` of the `src` folder on `db_url`, listening (its stderr in `folder`/service.log);
    a keep-alive client of it."""
    port = common.free_port()
    errors = folder / "service.log"
    env = common.clean_env(folder, ASRAMA_SERVICE_TOKEN=common.TOKEN, PYTHONPATH=str(src))
    command = [sys.executable, "-m", "mcp_asrama", "--log-level", "WARNING", "service", "--host", "127.0.0.1"]
    with common.process([*command, "--port", str(port), "--db", db_url], env, errors) as proc:
        await common.wait_listening(port, proc, errors)
        async with common.direct_client(f"http://127.0.0.1:{port}", timeout=120.0) as client:
            yield client


async def through_mcp(client: Client, read: Read) -> float:
    started = time.perf_counter()
    result = await common.round_trip(client, common.tool_call(read.tool, read.arguments))
    if result.is_error:
        raise RuntimeError(common.text_of(result)[:200])
    return (time.perf_counter() - started) * 1000


async def straight(direct: httpx2.AsyncClient, read: Read) -> float:
    started = time.perf_counter()
    for path in read.upstream:
        response = await direct.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}")
    return (time.perf_counter() - started) * 1000


async def run_size(students: int, folder: Path, args: argparse.Namespace) -> list[Read]:
    """One school: filled (or taken from --cache), its service started from revision `--rev`, read and timed."""
    common.log(f"size {students:,}:")
    today = date.today()
    if args.pg:
        if filled_for(args.pg, students, today):
            common.log(f"  {students:,} students: reusing the school already in the PostgreSQL database")
        else:
            common.fill_database(args.pg, students, DAYS, today)
            records_for_postgresql(args.pg, students, today)
        db_url = args.pg
    else:
        db_url = common.sqlite_school((args.cache or folder) / f"demo-{students}-{today}-{DAYS}d.db", students, DAYS)
    reads = reads_for(today, common_first_name(db_url))
    transport = RecordingTransport()
    async with contextlib.AsyncExitStack() as stack:
        src = stack.enter_context(common.baseline_src(args.rev))
        direct = await stack.enter_async_context(service_of(src, db_url, folder))
        settings = ServerSettings(
            api_url=str(direct.base_url).rstrip("/"),
            api_token=common.TOKEN,
            stdio_scope=["all", "peran:kesehatan"],
            rate_limit="1000000/min",
            rate_burst=1_000_000,
        )
        client = await stack.enter_async_context(Client(build_server(settings, transport=transport), cache=None))
        for read in reads:
            transport.sent.clear()
            try:
                await through_mcp(client, read)
            except RuntimeError as exc:
                read.failure = str(exc)
                common.log(f"  {read.label}: failed, not timed: {exc}")
                continue
            read.upstream = [path for path, _ in transport.sent]
            read.bytes_in = sum(size for _, size in transport.sent)
            await straight(direct, read)
        timed = [r for r in reads if r.failure is None]
        common.log(f"  {args.rounds} rounds x {len(timed)} reads, through the MCP server and straight")
        for n in range(args.rounds):
            for read in common.rotated(timed, n):
                if n % 2 == 0:
                    read.mcp.append(await through_mcp(client, read))
                    read.direct.append(await straight(direct, read))
                else:
                    read.direct.append(await straight(direct, read))
                    read.mcp.append(await through_mcp(client, read))
            common.log(f"  round {n + 1}/{args.rounds}")
    return reads


def table(students: int, backend: str, reads: list[Read]) -> tuple[str, list[str]]:
    """The size's markdown table and its reads that missed a target (or failed)."""
    lines = [
        f"**{students:,} students, {backend}**",
        "",
        "| read | MCP p50 ms | MCP p90 ms | service p50 ms | service p90 ms | MCP / service p50 | requests | "
        "bytes from the service | service p90 < 1 s, MCP p90 < timeout / 2 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    missed = []
    for r in reads:
        if r.failure is not None:
            lines.append(common.md_row([r.label, "**failed**", "", "", "", "", "", "", r.failure[:100]]))
            missed.append(f"{r.label} failed")
            continue
        mcp50, mcp90 = common.percentile(r.mcp, 50), common.percentile(r.mcp, 90)
        s50, s90 = common.percentile(r.direct, 50), common.percentile(r.direct, 90)
        met = s90 < SERVICE_TARGET_MS and mcp90 < TIMEOUT_S * 1000 / 2
        if not met:
            missed.append(f"{students:,} {backend}, {r.label}")
        cells = [f"{mcp50:.1f}", f"{mcp90:.1f}", f"{s50:.1f}", f"{s90:.1f}", f"{mcp50 / s50:.2f}×"]
        lines.append(common.md_row([r.label, *cells, len(r.upstream), f"{r.bytes_in:,}", common.verdict(met)]))
    return "\n".join(lines), missed


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__)
    parser.add_argument("--sizes", default="100000", help="students per school, comma-separated")
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds per size (default 10)")
    parser.add_argument("--cache", type=Path, help="keep each SQLite school in this folder and reuse it")
    parser.add_argument("--rev", default="HEAD", help="the revision whose service runs (default HEAD)")
    common.add_log_level(parser, "WARNING", "the MCP server in this process")
    args = parser.parse_args(argv)
    args.pg = os.environ.get(PG_ENV)  # read before the ASRAMA_* settings are dropped; never printed
    configure_logging(args.log_level)
    common.drop_asrama_env()
    started, load_before = time.perf_counter(), common.load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-scale-"))
    os.environ["XDG_DATA_HOME"] = str(folder)
    backend = "PostgreSQL" if args.pg else "SQLite"
    print(
        f"{common.preamble()}; {common.versions('mcp', 'httpx2')}. Demo school, {DAYS} days of attendance, "
        f"{backend}, the data service a process, the office's MCP server in process; {args.rounds} rounds.",
        flush=True,
    )
    missed: list[str] = []
    try:
        for students in (int(s.replace("_", "")) for s in args.sizes.split(",")):
            report, misses = table(students, backend, await run_size(students, folder, args))
            print(f"\n{report}", flush=True)
            missed += misses
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\nTargets missed: {'; '.join(missed) or 'none'}. Load average (1/5/15 min) {load_before} before and "
        f"{common.load()} after; wall time {time.perf_counter() - started:.0f} s."
    )
    return 1 if any("failed" in m for m in missed) else 0


if __name__ == "__main__":
    common.run(main, trace=True)
