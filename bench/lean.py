"""CPU per request of the data service's `GET /anak/{id}` against a bare FastAPI app serving the same route.

A script, not a test (pytest never collects it). Both run as processes of their own on 127.0.0.1, on the same
uvicorn, HTTP parser (`ASRAMA_HTTP`, as stack.py chooses) and asyncio loop, the same SQLite file (the demo
school) and the same query (`crud_anak.get_anak`, answered as `AnakPublic`):
- the service: `mcp-asrama --log-level INFO service`, as a school runs it (token, Host/Origin gate, connection
  limits, the JSON access log written to a file);
- the same service at `--log-level WARNING` (no access line): what the access log costs;
- with `--baseline REV`, the service of a git revision (`git archive`, first on PYTHONPATH) at WARNING;
- the bare app: this file with `--bare PORT URL`, one sync route, a plain `create_engine(url)` and its default
  pool, nothing else (no token, no middleware, no log line per request).

Per round each gets a block of `--requests` requests from `c` concurrent clients of its own (httpx2, kept-alive
connections), all servers at once, so that load from elsewhere on the machine hits them alike (`--one-by-one`:
in rotating order instead, whose ratios spread 0.9-2.7x on a busy machine). The CPU time (user + system, /proc)
a server process spent on its block, divided by its requests, is its CPU per request; the ratio to the bare app's
is taken per round and the table shows their median. One client process drives all servers: at c = 8 it is the
bottleneck (the servers' requests/s are alike), so a server has fewer than 8 requests in hand at times. Prints a
markdown table on stdout.

    .venv/bin/python bench/lean.py                 # c = 1 and 8, 9 rounds of 1,000 requests
    .venv/bin/python bench/lean.py --quick         # 3 rounds of 600
    .venv/bin/python bench/lean.py --baseline a9f9de5   # and the service before issue 24's pool
"""

import argparse
import asyncio
import contextlib
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import httpx2

import common

TARGET = 1.2  # CPU per request of the service / the bare app (issue 24)
TODAY = date(2026, 11, 30)


def bare_app(url: str) -> Any:
    """The baseline: FastAPI, one sync route, the service's own query and answer model, a default engine."""
    from fastapi import Depends, FastAPI, HTTPException, Path
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session, sessionmaker

    from mcp_asrama.service.crud import anak as crud_anak
    from mcp_asrama.service.schemas.anak import AnakPublic

    sessions = sessionmaker(create_engine(url, connect_args={"check_same_thread": False}), expire_on_commit=False)
    app = FastAPI()

    def session() -> Iterator[Session]:
        with sessions() as s:
            yield s

    @app.get("/anak/{id_anak}", response_model=AnakPublic)
    def detail_anak(s: Annotated[Session, Depends(session)], id_anak: Annotated[str, Path()]) -> AnakPublic:
        anak = crud_anak.get_anak(s, id_anak)
        if anak is None:
            raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
        return AnakPublic.model_validate(anak)

    return app


def serve_bare(port: int, url: str) -> None:
    """Run the bare app on 127.0.0.1:`port` with uvicorn as the service runs it (parser, loop, TCP_NODELAY)."""
    import uvicorn

    from mcp_asrama.runtime.stack import Stack

    config = uvicorn.Config(
        bare_app(url), http=Stack().parser, loop="asyncio", ws="none", access_log=False, log_level="warning"
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # as serving.listen: no Nagle
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    uvicorn.Server(config).run(sockets=[sock])


@contextlib.asynccontextmanager
async def bare_process(folder: Path, url: str) -> AsyncIterator[common.Running]:
    port = common.free_port()
    errors = folder / "bare.log"
    command = [sys.executable, str(Path(__file__).resolve()), "--bare", str(port), url]
    with common.process(command, common.clean_env(folder), errors) as proc:
        await common.wait_listening(port, proc, errors)
        yield common.Running(port, proc.pid)


@dataclass
class Side:
    """One server under test: its process, a client for it, and the CPU ms per request of each block."""

    name: str
    pid: int
    client: httpx2.AsyncClient
    cpu: list[float] = field(default_factory=list)
    rps: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)  # CPU per request / the bare app's, block by block


async def block(side: Side, path: str, requests: int, concurrency: int) -> None:
    """`requests` GETs of `path` from `concurrency` clients; the server's CPU ms per request and the requests/s."""
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            (await side.client.get(path)).raise_for_status()

    cpu, started = common.cpu_ms(side.pid), time.perf_counter()
    async with asyncio.TaskGroup() as tasks:
        for _ in range(concurrency):
            tasks.create_task(worker())
    side.cpu.append((common.cpu_ms(side.pid) - cpu) / requests)
    side.rps.append(requests / (time.perf_counter() - started))


def student_id(url: str) -> str:
    with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
        return str(conn.execute("SELECT id FROM anak ORDER BY id LIMIT 1 OFFSET 500").fetchone()[0])


def client(running: common.Running, concurrency: int) -> httpx2.AsyncClient:
    """Room for `concurrency` kept-alive connections; the service's token (the bare app ignores it)."""
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Authorization": f"Bearer {common.TOKEN}"}
    return httpx2.AsyncClient(base_url=running.url, headers=headers, limits=limits, timeout=30)


async def measure(url: str, folder: Path, concurrency: int, args: argparse.Namespace) -> list[Side]:
    """The servers started afresh, warmed up, then measured block by block in rotating order."""
    path = f"/anak/{student_id(url)}"
    async with contextlib.AsyncExitStack() as stack:
        sides = []
        for name, level in (("service", "INFO"), ("service, access log off", "WARNING")):
            log_name = f"service-{level.lower()}-c{concurrency}"
            running = await stack.enter_async_context(common.data_service(folder, url, level, name=log_name))
            sides.append(Side(name, running.pid, await stack.enter_async_context(client(running, concurrency))))
        if args.baseline:
            src = stack.enter_context(common.baseline_src(args.baseline))
            served = await stack.enter_async_context(common.service_from(url, src, label="baseline"))
            sides.append(Side(f"service at {args.baseline}, access log off", served.pid, served.client))
        bare = await stack.enter_async_context(bare_process(folder, url))
        sides.append(Side("bare", bare.pid, await stack.enter_async_context(client(bare, concurrency))))
        for side in sides:
            await block(side, path, max(200, args.requests // 5), concurrency)
            side.cpu.clear()
            side.rps.clear()
        for i in range(args.alternations):
            if not args.one_by_one:
                await asyncio.gather(*(block(side, path, args.requests, concurrency) for side in sides))
            else:
                for side in common.rotated(sides, i):
                    await block(side, path, args.requests, concurrency)
        for side in sides[:-1]:
            side.ratios = [ours / base for ours, base in zip(side.cpu, sides[-1].cpu, strict=True)]
            common.log(f"  c={concurrency}, {side.name}: {', '.join(f'{r:.2f}' for r in side.ratios)}")
        return sides


def table(rows: dict[int, list[Side]]) -> str:
    head = ["c", "server", "CPU ms / request", "**/ bare**", "range", "requests/s"]
    lines = [common.md_row(head), "|---|---|" + "---:|" * (len(head) - 2)]
    for c, sides in rows.items():
        for side in sides:
            ratio = statistics.median(side.ratios) if side.ratios else 1.0
            target = f" ({common.verdict(ratio <= TARGET)})" if side.name == "service" else ""
            spread = f"{min(side.ratios):.2f}–{max(side.ratios):.2f}×" if side.ratios else ""
            shown = f"**{ratio:.2f}×**{target}" if side.ratios else "1.00×"
            cpu, rps = statistics.median(side.cpu), statistics.median(side.rps)
            lines.append(common.md_row([c, side.name, f"{cpu:.3f}", shown, spread, f"{rps:.0f}"]))
    return "\n".join(lines)


async def main() -> int:
    parser = common.parser(__doc__, "3 rounds of 600 requests")
    parser.add_argument("--concurrency", default="1,8", help="comma-separated client counts (default 1,8)")
    parser.add_argument("--requests", type=int, help="requests per block (default 1000, quick 600)")
    parser.add_argument("--alternations", type=int, help="rounds (default 9, quick 3)")
    parser.add_argument("--students", type=int, default=1000, help="size of the demo school (default 1000)")
    parser.add_argument("--baseline", metavar="REV", help="also the service of a git revision (log level WARNING)")
    parser.add_argument(
        "--one-by-one", action="store_true", help="each round, one server after another (default: all at once)"
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep the database and the logs in DIR")
    args = parser.parse_args()
    args.requests = args.requests or (600 if args.quick else 1000)
    args.alternations = args.alternations or (3 if args.quick else 9)
    load_before = common.load()
    with contextlib.ExitStack() as stack:
        folder = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="asrama-lean-")))
        folder.mkdir(parents=True, exist_ok=True)
        url = common.sqlite_school(folder / f"asrama-{args.students}.db", args.students, 30, TODAY)
        rows = {c: await measure(url, folder, c, args) for c in (int(n) for n in args.concurrency.split(","))}
    print(common.preamble(load_before))
    print()
    print(table(rows))
    print()
    mode = "servers one by one" if args.one_by_one else "all servers at once"
    print(f"{args.alternations} rounds of {args.requests} requests, {mode}; {common.versions('uvicorn', 'fastapi')}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--bare":
        serve_bare(int(sys.argv[2]), sys.argv[3])
    else:
        common.run(main)
