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

import argparse
import asyncio
import contextlib
import os
import platform
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parents[1]
TOKEN = secrets.token_urlsafe(16)
START_TIMEOUT = 600.0  # seconds: a start that upgrades or analyses a large database may take a while


@dataclass
class Variant:
    label: str
    src: Path
    db: Path = Path()
    start_s: float = 0.0
    samples: dict[str, list[float]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def baseline_src(rev: str, folder: Path) -> Iterator[Path]:
    """The `src` folder of revision `rev`, extracted into `folder`."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "src"],  # noqa: S607 - git from PATH
        check=True,
        capture_output=True,
    ).stdout
    tar_path = folder / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(folder / "baseline", filter="data")
    yield folder / "baseline" / "src"


@contextlib.asynccontextmanager
async def running(variant: Variant, timeout: float) -> AsyncIterator[httpx2.AsyncClient]:
    """`mcp-asrama service` of `variant` on its database copy and a free port, and a client for it."""
    port = _free_port()
    env = {**os.environ, "ASRAMA_SERVICE_TOKEN": TOKEN, "PYTHONPATH": str(variant.src)}
    env = {k: v for k, v in env.items() if not k.startswith("ASRAMA_") or k == "ASRAMA_SERVICE_TOKEN"}
    command = [sys.executable, "-m", "mcp_asrama", "--log-level", "WARNING", "service", "--host", "127.0.0.1"]
    started = time.perf_counter()
    server = subprocess.Popen(
        [*command, "--port", str(port), "--db", f"sqlite:///{variant.db}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=timeout) as client:
            while True:
                with contextlib.suppress(httpx2.TransportError):
                    if (await client.get("/healthz")).status_code == 200:
                        break
                if server.poll() is not None:
                    raise RuntimeError(f"{variant.label}: the service exited with {server.returncode}")
                if time.perf_counter() - started > START_TIMEOUT:
                    raise RuntimeError(f"{variant.label}: no /healthz answer within {START_TIMEOUT:.0f} s")
                await asyncio.sleep(0.05)
            variant.start_s = time.perf_counter() - started
            yield client
    finally:
        server.terminate()
        server.wait(timeout=30)


async def timed(client: httpx2.AsyncClient, path: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    response = await client.get(path)
    body = response.content
    return (time.perf_counter() - started) * 1000, response.status_code, len(body)


async def measure(variants: list[Variant], paths: list[str], rounds: int, timeout: float) -> None:
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(running(v, timeout)) for v in variants]
        for v in variants:
            print(f"{v.label}: listening after {v.start_s:.2f} s", file=sys.stderr)
        for v, client in zip(variants, clients, strict=True):
            for path in paths:
                ms, status, size = await timed(client, path)
                if status != 200:
                    raise RuntimeError(f"{v.label}: {path} answered {status}")
                v.sizes[path] = size
                print(f"{v.label}: warm-up {path} {ms:.1f} ms, {size} bytes", file=sys.stderr)
        for n in range(rounds):
            order = paths[n % len(paths) :] + paths[: n % len(paths)]
            pairs = list(zip(variants, clients, strict=True))
            for path in order:
                for v, client in pairs if n % 2 == 0 else pairs[::-1]:
                    ms, status, _ = await timed(client, path)
                    if status != 200:
                        raise RuntimeError(f"{v.label}: {path} answered {status}")
                    v.samples.setdefault(path, []).append(ms)
            print(f"round {n + 1}/{rounds}", file=sys.stderr)


def report(variants: list[Variant], paths: list[str], rounds: int, db: Path) -> str:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"{db.name}, {rounds} rounds, {platform.python_version()}, {os.cpu_count()} cores, load {load} (at the end)",
        "",
        "| variant | start s | " + " | ".join(f"`{p}` p50 / p90 ms" for p in paths) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in paths) + " |",
    ]
    for v in variants:
        cells = []
        for p in paths:
            s = sorted(v.samples[p])
            p90 = statistics.quantiles(s, n=10, method="inclusive")[8] if len(s) > 1 else s[0]
            cells.append(f"{statistics.median(s):.2f} / {p90:.2f}")
        lines.append(f"| {v.label} | {v.start_s:.2f} | " + " | ".join(cells) + " |")
    if len(variants) > 1:
        base = variants[0]
        for v in variants[1:]:
            ratios = [statistics.median(v.samples[p]) / statistics.median(base.samples[p]) for p in paths]
            lines.append(f"| {v.label} / {base.label} | | " + " | ".join(f"{r:.3f}x" for r in ratios) + " |")
    lines += ["", "response bytes: " + "; ".join(f"`{p}` {variants[0].sizes[p]}" for p in paths)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
                src = stack.enter_context(baseline_src(args.baseline, folder))
                variants.append(Variant(f"baseline {args.baseline}", src))
            variants.append(Variant("this tree", REPO / "src"))
            for n, v in enumerate(variants):
                v.db = folder / f"variant-{n}.db"
                shutil.copyfile(args.db, v.db)
            asyncio.run(measure(variants, args.path, args.rounds, args.timeout))
        print(report(variants, args.path, args.rounds, args.db))
    return 0


if __name__ == "__main__":
    sys.exit(main())
