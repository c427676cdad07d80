"""Latency of the data service: name search (`GET /anak?nama=`) and a class's 30-day attendance summary
(`GET /absensi/rekap?dari=&sampai=&kelas=`) at 1,000 and 100,000 students, on SQLite and optionally PostgreSQL.

A script, not a test (pytest never collects it). Each database is filled by the project's own demo generator
(`demo.generate`, 30 days of attendance; stored with `demo.insert_school`, except PostgreSQL's attendance rows,
which go in by COPY because executemany takes ~3 minutes for 3 million rows). Requests go one at a time through
the real application (`create_app`, with a bearer token): in process over `httpx2.ASGITransport` by default or,
with `--http`, over real HTTP to `mcp-asrama service` processes on 127.0.0.1. Latency is the client-side time
of a whole request (routing, auth, queries, validation, JSON). The sizes are measured interleaved, request by
request, so that load from elsewhere on the machine hits both alike. Prints a markdown table on stdout.

    .venv/bin/python bench/service.py                      # SQLite, 1,000 and 100,000 students
    .venv/bin/python bench/service.py --quick              # 1,000 and 10,000 students, fewer requests
    .venv/bin/python bench/service.py --pg "$(bash scripts/postgres-for-tests.sh)"   # and PostgreSQL
    .venv/bin/python bench/service.py --cache /tmp/asrama-bench   # keep the databases between runs
"""

import argparse
import asyncio
import contextlib
import hashlib
import os
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import httpx2
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

import common
from mcp_asrama.config import ServiceSettings
from mcp_asrama.service import db as service_db
from mcp_asrama.service import demo, models
from mcp_asrama.service.app import create_app

TODAY = date(2026, 11, 30)  # fixed, so every run measures the same data
DAYS = 30
KELAS = "7A"
# Substrings of the generated (Faker id_ID) names, common to absent. Faker's name pool is fixed, so the
# number of matches grows with the school, as it would in a real one; the table shows it.
NAME_TERMS = ["sari", "wahyu", "putri", "hidayat", "gilang", "xyz"]
SHORT_TERM = "an"  # 2 characters: below what a trigram index can serve, a scan (reported on its own)


@dataclass
class Query:
    """One benchmarked request: a label for the table, the path and query parameters."""

    label: str
    path: str
    params: dict[str, str]
    target: bool = False  # a name search the target is about (p50 at the largest size / the smallest)


@dataclass
class Result:
    """Latencies (ms) of one query at one size, and how many students the response counted."""

    samples: list[float] = field(default_factory=list)
    matches: int = 0

    def percentile(self, p: int) -> float:
        return common.percentile(self.samples, p)


def queries() -> list[Query]:
    dari, sampai = TODAY - timedelta(days=DAYS - 1), TODAY
    rekap = {"dari": dari.isoformat(), "sampai": sampai.isoformat(), "kelas": KELAS}
    return [
        *(Query(f"`nama={t}`", "/anak", {"nama": t}, target=True) for t in NAME_TERMS),
        Query(f"`nama={SHORT_TERM}` (2 chars, scan)", "/anak", {"nama": SHORT_TERM}),
        Query(f"rekap {KELAS}, {DAYS} days", "/absensi/rekap", rekap),
        Query(f"rekap {KELAS}, {DAYS} days, `limit=20`", "/absensi/rekap", {**rekap, "limit": "20"}),
    ]


# --- databases -------------------------------------------------------------------------------------------


def _fingerprint() -> str:
    """Changes with the schema, the indexes or the generator, so that a kept database is built anew."""
    digest = hashlib.sha256()
    tables = sorted(Path(str(models.__file__)).parent.glob("*.py"))  # the package: one module per domain
    for path in [Path(str(service_db.__file__)), *tables, Path(str(demo.__file__))]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def sqlite_database(folder: Path, students: int) -> str:
    return common.sqlite_school(folder / f"asrama-{students}-{DAYS}d-{_fingerprint()}.db", students, DAYS, TODAY)


@contextlib.contextmanager
def postgres_database(admin_url: str, students: int, keep: bool) -> Iterator[str]:
    """A database of its own on the server of `admin_url`: kept (and reused) with `keep`, else dropped."""
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    final = f"asrama_bench_{students}_{DAYS}d_{_fingerprint()}"
    name = final if keep else f"asrama_bench_{uuid.uuid4().hex[:10]}"
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    try:
        with admin.connect() as conn:
            exists = conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name})
            if keep and exists:
                common.log(f"  {students:,} students: reusing database {name}")
            else:
                building = f"{final}_partial" if keep else name
                conn.execute(text(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)'))
                conn.execute(text(f'CREATE DATABASE "{building}"'))
                building_url = make_url(url).set(database=building).render_as_string(hide_password=False)
                common.fill_database(building_url, students, DAYS, TODAY)
                if building != name:
                    conn.execute(text(f'ALTER DATABASE "{building}" RENAME TO "{name}"'))
        yield url
    finally:
        if not keep:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# --- clients ---------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def in_process(url: str) -> AsyncIterator[httpx2.AsyncClient]:
    app = create_app(ServiceSettings(db_url=url, service_token=common.TOKEN))
    transport = httpx2.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {common.TOKEN}"}
    try:
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers) as c:
            yield c
    finally:
        app.state.engine.dispose()


@contextlib.asynccontextmanager
async def over_http(url: str) -> AsyncIterator[httpx2.AsyncClient]:
    """`mcp-asrama service` on a free port of 127.0.0.1, as a process of its own, and a client for it."""
    async with common.service_from(url) as served:
        yield served.client


# --- measuring -------------------------------------------------------------------------------------------


async def measure(clients: dict[int, httpx2.AsyncClient], query: Query, args: argparse.Namespace) -> dict[int, Result]:
    """Warm up each size, then time up to `args.iterations` rounds of one request per size (sizes alternate
    in order); stop early once `args.budget` seconds are spent and every size has at least 20 samples."""
    results = {n: Result() for n in clients}
    for n, client in clients.items():
        for _ in range(max(1, args.warmup)):
            response = await client.get(query.path, params=query.params)
            response.raise_for_status()
        body = response.json()
        results[n].matches = body["jumlah_anak"] if "jumlah_anak" in body else body["total"]
    order = list(clients)
    deadline = time.perf_counter() + args.budget
    for i in range(args.iterations):
        for n in order if i % 2 == 0 else reversed(order):
            started = time.perf_counter()
            response = await clients[n].get(query.path, params=query.params)
            results[n].samples.append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
        if i >= 19 and time.perf_counter() > deadline:
            break
    return results


async def bench_backend(urls: dict[int, str], args: argparse.Namespace) -> dict[int, dict[str, Result]]:
    by_size: dict[int, dict[str, Result]] = {n: {} for n in urls}
    async with contextlib.AsyncExitStack() as stack:
        connect = over_http if args.http else in_process
        clients = {n: await stack.enter_async_context(connect(url)) for n, url in urls.items()}
        for query in queries():
            results = await measure(clients, query, args)
            for n, r in results.items():
                by_size[n][query.label] = r
            rounds = min(len(r.samples) for r in results.values())
            each = (f"{_k(n)} p50 {r.percentile(50):.2f} p99 {r.percentile(99):.2f} ms" for n, r in results.items())
            common.log(f"    {query.label}: {', '.join(each)} (n={rounds})")
    return by_size


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n:,}"


def table(all_results: dict[str, dict[int, dict[str, Result]]], sizes: list[int]) -> str:
    small, large = sizes[0], sizes[-1]
    head = ["db", "query", f"matches {' → '.join(_k(n) for n in sizes)}"]
    for n in sizes:
        head += [f"p50 ms {_k(n)}", f"p99 ms {_k(n)}"]
    head += [f"p50 {_k(large)}/{_k(small)}", "n"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for backend, by_size in all_results.items():
        for query in queries():
            results = [by_size[n][query.label] for n in sizes]
            row = [backend, query.label, " → ".join(f"{r.matches:,}" for r in results)]
            for r in results:
                row += [f"{r.percentile(50):.2f}", f"{r.percentile(99):.2f}"]
            ratio = results[-1].percentile(50) / results[0].percentile(50)
            row += [f"**{ratio:.2f}×**" if query.target else f"{ratio:.2f}×", str(len(results[0].samples))]
            lines.append(common.md_row(row))
        # Every ≥3-character term's samples together: the name search as a whole.
        pooled = [Result([s for q in queries() if q.target for s in by_size[n][q.label].samples]) for n in sizes]
        row = [backend, "**name search, all ≥3-char terms**", ""]
        for r in pooled:
            row += [f"{r.percentile(50):.2f}", f"{r.percentile(99):.2f}"]
        row += [f"**{pooled[-1].percentile(50) / pooled[0].percentile(50):.2f}×**", str(len(pooled[0].samples))]
        lines.append(common.md_row(row))
    return "\n".join(lines)


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__, "1,000 and 10,000 students, fewer requests")
    parser.add_argument("--sizes", help="comma-separated numbers of students, smallest first (default 1000,100000)")
    parser.add_argument("--pg", metavar="URL", help="also PostgreSQL: a URL of a user allowed to CREATE DATABASE")
    parser.add_argument("--http", action="store_true", help="over real HTTP to `mcp-asrama service` on 127.0.0.1")
    parser.add_argument(
        "--cache",
        type=Path,
        metavar="DIR",
        help="keep the databases between runs: SQLite files in DIR, PostgreSQL databases asrama_bench_* "
        "(default: a temporary folder and databases, removed at the end)",
    )
    parser.add_argument("--warmup", type=int, help="untimed requests per query and size (default 20, quick 5)")
    parser.add_argument("--iterations", type=int, help="timed rounds per query at most (default 200, quick 50)")
    parser.add_argument("--budget", type=float, help="seconds per query, after 20 rounds (default 8, quick 2)")
    args = parser.parse_args(argv)
    sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else [1000, 10_000 if args.quick else 100_000]
    args.warmup = args.warmup if args.warmup is not None else (5 if args.quick else 20)
    args.iterations = args.iterations or (50 if args.quick else 200)
    args.budget = args.budget or (2.0 if args.quick else 8.0)

    started = time.perf_counter()
    results: dict[str, dict[int, dict[str, Result]]] = {}
    folder = args.cache or Path(tempfile.mkdtemp(prefix="asrama-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        common.log("SQLite")
        results["SQLite"] = await bench_backend({n: sqlite_database(folder, n) for n in sizes}, args)
        if args.pg:
            common.log("PostgreSQL")
            with contextlib.ExitStack() as stack:
                urls = {n: stack.enter_context(postgres_database(args.pg, n, keep=bool(args.cache))) for n in sizes}
                results["PostgreSQL"] = await bench_backend(urls, args)
    finally:
        if args.cache is None:
            shutil.rmtree(folder, ignore_errors=True)

    mode = "real HTTP to `mcp-asrama service` on 127.0.0.1" if args.http else "in process (httpx2.ASGITransport)"
    print(table(results, sizes))
    print()
    print(
        f"{mode}; sizes interleaved; {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, SQLite {sqlite3.sqlite_version}; wall time {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
