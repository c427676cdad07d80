"""Memory of the data service at 100,000 students after bursts of mixed requests at concurrency 16, and the name
search's latency, for this working tree's service and a baseline revision's, side by side in one run.

A script, not a test. Each variant is a real `mcp-asrama service` process on 127.0.0.1 (uvicorn, its default
thread pool) over the same SQLite file: this tree's `src`, and the `src` of `--baseline REV` (`git archive`,
put first on PYTHONPATH; the same virtual environment). Both run at once. Per round, each variant in turn (the
order alternates) gets a burst of `--requests` mixed reads from 16 concurrent clients (name searches, class and
room lists, a day's attendance of a class, 30-day summaries of several classes); then its VmRSS, VmHWM, RssAnon
and RssFile are read from /proc/PID/status. Afterwards the name search (`GET /anak?nama=` with the terms of
bench/service.py of three or more characters) is timed one request at a time, alternating between the
variants, over real HTTP. Prints a markdown table on stdout; progress on stderr.

RssAnon is the process's private memory. RssFile is file-backed: the shared libraries (~23 MiB) and, with SQLite's
memory map, the database pages each connection has touched, counted once per connection's mapping although they
are one copy in the OS page cache, clean and dropped by the OS under pressure; VmRSS is their sum.

    .venv/bin/python bench/memory.py                                  # builds a 100k database (~1-2 min)
    .venv/bin/python bench/memory.py --db /tmp/asrama-bench/school-100k.db --baseline 5d1497d
    .venv/bin/python bench/memory.py --variant "2 MiB=/tmp/exp/src"   # more variants: NAME=SRC_DIR
"""

import argparse
import asyncio
import contextlib
import itertools
import os
import platform
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx2

import common
from service import DAYS, NAME_TERMS, SHORT_TERM, TODAY, Result

CONCURRENCY = 16  # what common.service_from's client has room for
MIB = 1024 * 1024
STATUS_FIELDS = ("VmRSS", "VmHWM", "RssAnon", "RssFile")


@dataclass
class Variant:
    """One service under test: its label, the `src` folder it runs from, and what was measured of it."""

    label: str
    src: Path
    pid: int = 0
    memory: list[dict[str, int]] = field(default_factory=list)  # /proc status fields (bytes) after each burst
    idle: dict[str, int] = field(default_factory=dict)
    search: Result = field(default_factory=Result)


def status(pid: int) -> dict[str, int]:
    """The memory fields of /proc/PID/status, in bytes."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in STATUS_FIELDS:
            values[name] = int(rest.split()[0]) * 1024
    return values


def mixed_requests() -> Iterator[tuple[str, dict[str, str]]]:
    """The burst's requests, in an endless cycle: what a morning of musyrif and office queries touches."""
    dari, sampai = (TODAY - timedelta(days=DAYS - 1)).isoformat(), TODAY.isoformat()
    classes = ["7A", "8B", "9C", "10A", "11B", "12C"]
    mix: list[tuple[str, dict[str, str]]] = [("/anak", {"nama": t}) for t in [*NAME_TERMS, SHORT_TERM]]
    for kelas in classes:
        mix += [
            ("/anak", {"kelas": kelas, "limit": "100"}),
            ("/absensi", {"tanggal": sampai, "kelas": kelas}),
            ("/absensi/rekap", {"dari": dari, "sampai": sampai, "kelas": kelas, "limit": "20"}),
        ]
    return itertools.cycle(mix)


async def burst(client: httpx2.AsyncClient, count: int) -> float:
    """`count` requests of the mix from 16 concurrent clients; returns the wall time in seconds."""
    requests = mixed_requests()
    remaining = iter(range(count))

    async def worker() -> None:
        for _ in remaining:
            path, params = next(requests)
            (await client.get(path, params=params)).raise_for_status()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started


async def measure(variants: list[Variant], db_url: str, args: argparse.Namespace) -> None:
    async with contextlib.AsyncExitStack() as stack:
        clients: list[httpx2.AsyncClient] = []
        for v in variants:
            served = await stack.enter_async_context(common.service_from(db_url, v.src, timeout=120, label=v.label))
            clients.append(served.client)
            v.pid = served.pid
        for v in variants:
            v.idle = status(v.pid)
        for round_ in range(args.rounds):
            order = list(zip(variants, clients, strict=True))
            for v, client in order if round_ % 2 == 0 else reversed(order):
                seconds = await burst(client, args.requests)
                v.memory.append(status(v.pid))
                common.log(
                    f"  burst {round_ + 1} {v.label}: {seconds:.1f} s, VmRSS {v.memory[-1]['VmRSS'] / MIB:.0f} MiB"
                )
        for i in range(args.iterations):
            term = NAME_TERMS[i % len(NAME_TERMS)]
            pairs = list(zip(variants, clients, strict=True))
            for v, client in pairs if i % 2 == 0 else reversed(pairs):
                started = time.perf_counter()
                response = await client.get("/anak", params={"nama": term})
                v.search.samples.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()


def table(variants: list[Variant]) -> str:
    base = variants[0]
    head = ["service", "VmRSS idle", *(f"VmRSS after burst {i + 1}" for i in range(len(base.memory)))]
    head += ["VmHWM", "RssAnon", "RssFile", "name search p50 ms", "p99 ms", "p50 / baseline", "n"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for v in variants:
        last = v.memory[-1]
        row = [v.label, f"{v.idle['VmRSS'] / MIB:.0f}", *(f"{m['VmRSS'] / MIB:.0f}" for m in v.memory)]
        row += [f"{last[f] / MIB:.0f}" for f in ("VmHWM", "RssAnon", "RssFile")]
        p50 = v.search.percentile(50)
        row += [f"{p50:.2f}", f"{v.search.percentile(99):.2f}", f"{p50 / base.search.percentile(50):.2f}×"]
        lines.append(common.md_row([*row, str(len(v.search.samples))]))
    return "\n".join(lines)


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__)
    parser.add_argument("--db", type=Path, help="an existing database of bench/service.py (default: build one)")
    parser.add_argument("--students", type=int, default=100_000, help="when building (default 100,000)")
    parser.add_argument("--baseline", default="5d1497d", help="revision to compare with (default 5d1497d)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=SRC", help="another src folder")
    parser.add_argument("--rounds", type=int, default=3, help="bursts per variant (default 3)")
    parser.add_argument("--requests", type=int, default=800, help="requests per burst (default 800)")
    parser.add_argument("--iterations", type=int, default=300, help="timed name searches per variant (default 300)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.db is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="asrama-memory-")))
            args.db = folder / "asrama.db"
            common.log(f"building {args.students:,} students")
            common.fill_database(f"sqlite:///{args.db}", args.students, DAYS, TODAY)
        variants = [Variant(f"baseline {args.baseline}", stack.enter_context(common.baseline_src(args.baseline)))]
        for spec in args.variant:
            label, _, src = spec.partition("=")
            variants.append(Variant(label, Path(src)))
        variants.append(Variant("this tree", common.REPO / "src"))
        await measure(variants, f"sqlite:///{args.db}", args)
    print(table(variants))
    print()
    print(
        f"MiB; {args.rounds} bursts of {args.requests} mixed requests at concurrency {CONCURRENCY} per variant, "
        f"variants alternating; name search over real HTTP, one request at a time, alternating; "
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"SQLite {sqlite3.sqlite_version}; wall time {time.perf_counter() - started:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
