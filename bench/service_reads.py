"""Latency of chosen data-service reads for this working tree's service and a baseline revision's, side by side.

A script, not a test. Each variant is a real `mcp-asrama service` process on 127.0.0.1 on its own copy of the
SQLite file given by `--db` (copied into a temporary folder, so the file itself is never changed, and a variant
that analyses its database at start does not hand statistics to the other): this tree's `src`, and the `src` of
`--baseline REV` (`git archive`, put first on PYTHONPATH; the same virtual environment). Both run at once. The
time from spawn to the first `/healthz` answer is reported per variant (a start that analyses a database shows
there). Each path is requested once per variant to warm up (its answer's size and status noted), then the timed
rounds interleave: every path, in an order that rotates every round, to every variant, in alternating order. A
request's time is the client's: sent, answered, body read. Prints a markdown table on stdout; progress on stderr.

    .venv/bin/python bench/service_reads.py --db /tmp/scoped/cache/demo-100000-2026-12-01-8d.db \\
        --baseline HEAD~1 --path '/izin?kelas=7A&limit=500' --path '/izin?limit=500' --rounds 40
"""

import asyncio
import contextlib
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

import common

START_TIMEOUT = 600.0  # seconds: a start that upgrades or analyses a large database may take a while


@dataclass
class Variant:
    label: str
    src: Path
    db: Path = Path()
    start_s: float = 0.0
    samples: dict[str, list[float]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


async def timed(client: httpx2.AsyncClient, path: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    response = await client.get(path)
    body = response.content
    return (time.perf_counter() - started) * 1000, response.status_code, len(body)


async def measure(variants: list[Variant], paths: list[str], rounds: int, timeout: float) -> None:
    async with contextlib.AsyncExitStack() as stack:
        clients: list[httpx2.AsyncClient] = []
        for v in variants:
            served = await stack.enter_async_context(
                common.service_from(
                    f"sqlite:///{v.db}", v.src, timeout=timeout, start_timeout=START_TIMEOUT, label=v.label
                )
            )
            clients.append(served.client)
            v.start_s = served.start_s
            common.log(f"{v.label}: listening after {v.start_s:.2f} s")
        for v, client in zip(variants, clients, strict=True):
            for path in paths:
                ms, status, size = await timed(client, path)
                if status != 200:
                    raise RuntimeError(f"{v.label}: {path} answered {status}")
                v.sizes[path] = size
                common.log(f"{v.label}: warm-up {path} {ms:.1f} ms, {size} bytes")
        for n in range(rounds):
            order = common.rotated(paths, n)
            pairs = list(zip(variants, clients, strict=True))
            for path in order:
                for v, client in pairs if n % 2 == 0 else pairs[::-1]:
                    ms, status, _ = await timed(client, path)
                    if status != 200:
                        raise RuntimeError(f"{v.label}: {path} answered {status}")
                    v.samples.setdefault(path, []).append(ms)
            common.log(f"round {n + 1}/{rounds}")


def report(variants: list[Variant], paths: list[str], rounds: int, db: Path) -> str:
    lines = [
        f"{db.name}, {rounds} rounds, {platform.python_version()}, {os.cpu_count()} cores, "
        f"load {common.load()} (at the end)",
        "",
        "| variant | start s | " + " | ".join(f"`{p}` p50 / p90 ms" for p in paths) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in paths) + " |",
    ]
    for v in variants:
        cells = []
        for p in paths:
            s = v.samples[p]
            cells.append(f"{statistics.median(s):.2f} / {common.percentile(s, 90):.2f}")
        lines.append(f"| {v.label} | {v.start_s:.2f} | " + " | ".join(cells) + " |")
    if len(variants) > 1:
        base = variants[0]
        for v in variants[1:]:
            ratios = [statistics.median(v.samples[p]) / statistics.median(base.samples[p]) for p in paths]
            lines.append(f"| {v.label} / {base.label} | | " + " | ".join(f"{r:.3f}x" for r in ratios) + " |")
    lines += ["", "response bytes: " + "; ".join(f"`{p}` {variants[0].sizes[p]}" for p in paths)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__)
    parser.add_argument("--db", type=Path, required=True, help="the SQLite file (copied per variant, not changed)")
    parser.add_argument("--baseline", help="a revision to compare with (git archive of its src)")
    parser.add_argument("--path", action="append", required=True, help="a GET path with its query (repeatable)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per request (default 600)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="asrama-reads-") as tmp:
        folder = Path(tmp)
        with contextlib.ExitStack() as stack:
            variants = []
            if args.baseline:
                src = stack.enter_context(common.baseline_src(args.baseline))
                variants.append(Variant(f"baseline {args.baseline}", src))
            variants.append(Variant("this tree", common.REPO / "src"))
            for n, v in enumerate(variants):
                v.db = folder / f"variant-{n}.db"
                shutil.copyfile(args.db, v.db)
            asyncio.run(measure(variants, args.path, args.rounds, args.timeout))
        print(report(variants, args.path, args.rounds, args.db))
    return 0


if __name__ == "__main__":
    sys.exit(main())
