"""Latency and size of `cari_anak` through the MCP server, against the same query sent straight to the service.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the project's demo school (`demo.generate(date.today(),
   students=1000, days=30)`, stored with `demo.insert_school`) and the real data service is started on it as a
   process of its own (`mcp-asrama service`, bearer token required, 127.0.0.1, a free port);
2. the same `cari_anak` queries are timed, round trip as the caller sees it, along these routes:
   - `direct REST` (the baseline): `GET /anak` with the query string the MCP server sends for the same
     arguments, over one keep-alive `httpx2.AsyncClient`; the body is read and parsed as JSON;
   - `MCP stdio`: `tools/call` to `mcp-asrama serve` (a subprocess, as a host runs it), one server process per
     protocol era (2026-07-28, and `initialize` as 2025 hosts open);
   - `MCP HTTP`: `tools/call` to `mcp-asrama serve --transport http` (stateless Streamable HTTP, a process on
     127.0.0.1), in both eras: without a progress token (one JSON body) and, shown beside, not judged, with one
     (an SSE stream: the progress report, then the result); and, shown beside, the same 2026-07-28 call POSTed
     by an httpx2 client like the direct route's (the server's part, without the SDK client's);
   an MCP call is the SDK client's `session.send_request(CallToolRequest, CallToolResult)`: the request framed
   and sent, the result received and parsed into its pydantic model. Shown beside them, not held to the target:
   the SDK's `Client.call_tool` (which also checks `structuredContent` against the tool's `outputSchema` in the
   client, with jsonschema) and an argument error (`limit=1000`: the MCP layer alone, no call to the service).
   Each route is warmed up and checked against the service's own answer; then the routes are interleaved call
   by call, the order rotating every round, so noise from elsewhere on the machine hits all of them alike;
3. the bytes of the text the model reads (`content[0].text` of our result, UTF-8) are compared with the text
   the tutorial's server would have sent for the same students: the service's `/anak` JSON for the tutorial's
   request (`nama`/`kelas`/`kamar` and `limit`), minus `nik`, `no_hp_wali` and `alamat` (its blocklist),
   `json.dumps(indent=2, ensure_ascii=False)`, as its SDK serialized a returned dict (see the tutorial's capture).

`--variants` instead compares the HTTP parser and event loop of both servers (ASRAMA_HTTP, ASRAMA_LOOP; see
src/mcp_asrama/stack.py) in the same run: per variant, a data service process and our MCP server (HTTP, and stdio
with that loop) on it, each variant's `direct REST`, `MCP stdio` and `MCP HTTP` (2026-07-28) interleaved with all
the others; each MCP route's ratio is to its own variant's direct REST, and the last column to the first variant's.
A table of CPU per request (user + system from /proc, over the timed rounds) of each server process follows: less
sensitive to the rest of the machine than latency.

Prints a markdown report on stdout, progress on stderr. Exits non-zero only on an error (a call that fails, an
answer that differs from the service's, a process that does not start); a missed target is printed as MISSED.

    .venv/bin/python bench/latency.py            # 300 timed rounds (about a minute and a half)
    .venv/bin/python bench/latency.py --quick    # 60 rounds
    .venv/bin/python bench/latency.py --variants h11+asyncio,httptools+asyncio,httptools+uvloop,auto --iterations 100
"""

import argparse
import asyncio
import contextlib
import json
import os
import platform
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path, and this file (mcp.py) would shadow the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult, TextContent  # noqa: E402

from mcp_asrama.service import demo  # noqa: E402
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker  # noqa: E402

TOKEN = secrets.token_urlsafe(16)
STUDENTS = 1000
DAYS = 30
LATENCY_TARGET = 2.0  # MCP p50 / direct REST p50, at most
SIZE_TARGET = 0.5  # our text / the tutorial's text, at most
TUTORIAL_BLOCKLIST = frozenset({"nik", "no_hp_wali", "alamat"})
ERAS = [("2026-07-28", "2026-07-28"), ("legacy", "initialize")]
EXECUTABLE = shutil.which("mcp-asrama", path=str(Path(sys.executable).parent)) or "mcp-asrama"
START_TIMEOUT = 30.0


@dataclass(frozen=True)
class Query:
    """One `cari_anak` call: a label, the tool's arguments, and the `/anak` query string our server sends."""

    label: str
    arguments: dict[str, Any]

    @property
    def params(self) -> dict[str, Any]:
        """Our server sends `limit` always and `offset` only when it is not 0; so did the tutorial's (never
        offset), so this is also the tutorial's request."""
        return {"limit": 20, **self.arguments}


TIMED = [
    Query("kelas=7A, limit=20", {"kelas": "7A", "limit": 20}),
    Query("nama=sari, limit=20", {"nama": "sari", "limit": 20}),
]
SIZED = [*TIMED, Query("kelas=7A, limit=100", {"kelas": "7A", "limit": 100})]  # sizes only: a bigger page too


@dataclass
class Route:
    """A way to run a query, and its samples (ms) per query label.

    `judged`: held to the latency target; `checked`: its answer must list the same students as the service's;
    `baseline`: the direct route its ratio is to (None: the first route).
    """

    name: str
    call: Callable[[Query], Awaitable[dict[str, Any]]]
    judged: bool = True
    checked: bool = True
    baseline: "Route | None" = None
    pid: int | None = None  # --variants: the process serving this route (a direct route's: the service)
    upstream: int | None = None  # --variants: the service process its calls reach
    samples: dict[str, list[float]] = field(default_factory=dict)
    cpu_ms: float | None = None  # CPU of `pid` in the timed rounds


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(samples: list[float], p: int) -> float:
    """The p-th percentile (1..99), interpolated between the two nearest samples."""
    return statistics.quantiles(samples, n=100, method="inclusive")[p - 1]


# --- processes -------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(folder: Path, **extra: str) -> dict[str, str]:
    """This environment without the developer's ASRAMA_* settings, data in `folder`, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    return {**env, "XDG_DATA_HOME": str(folder), **extra}


@contextlib.contextmanager
def process(command: list[str], env: dict[str, str], stderr: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A console-script process with its stderr in a file; terminated (killed if need be) at the end."""
    with stderr.open("w") as errors:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def wait_listening(port: int, proc: subprocess.Popen[bytes], stderr: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}:\n{stderr.read_text()[-2000:]}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            await writer.wait_closed()
            return
        except OSError:
            await asyncio.sleep(0.1)
    raise RuntimeError(f"nothing listens on port {port} after {START_TIMEOUT:.0f} s ({proc.args})")


def fill_database(url: str) -> int:
    engine = make_engine(url)
    try:
        init_schema(engine)
        school = demo.generate(date.today(), students=STUDENTS, days=DAYS)
        with make_sessionmaker(engine)() as session:
            return demo.insert_school(session, school)
    finally:
        engine.dispose()


# --- routes ----------------------------------------------------------------------------------------------


def direct_route(http: httpx2.AsyncClient, name: str = "direct REST") -> Route:
    async def call(query: Query) -> dict[str, Any]:
        response = await http.get("/anak", params=query.params)
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    return Route(name, call, judged=False, checked=False)


def _text(result: CallToolResult) -> str:
    first = result.content[0] if result.content else None
    return first.text if isinstance(first, TextContent) else ""


def _answer(name: str, query: Query, result: CallToolResult) -> dict[str, Any]:
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{name}: cari_anak({query.arguments}) failed: {_text(result)}")
    return {"structured": result.structured_content, "text": _text(result)}


async def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    """The streamed route's progress callback: the reports are heard (framed, parsed) and dropped."""


def mcp_route(name: str, client: Client, *, progress: bool = False) -> Route:
    """`tools/call` as a round trip on the wire: the request framed and sent, the result received and parsed.
    `progress`: the call asks for progress (a progress token), which over HTTP makes the answer an SSE stream."""
    listener = _ignore_progress if progress else None

    async def call(query: Query) -> dict[str, Any]:
        request = CallToolRequest(params=CallToolRequestParams(name="cari_anak", arguments=query.arguments))
        return _answer(
            name, query, await client.session.send_request(request, CallToolResult, progress_callback=listener)
        )

    return Route(name, call, judged=not progress)


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "cari_anak",
}


def raw_http_route(name: str, http: httpx2.AsyncClient) -> Route:
    """`tools/call` (2026-07-28) POSTed by the same keep-alive httpx2 client as the direct route, its JSON answer
    parsed: the server's part of an MCP call over HTTP, without the SDK client's."""

    async def call(query: Query) -> dict[str, Any]:
        params = {"name": "cari_anak", "arguments": query.arguments, "_meta": MODERN_META}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        response = await http.post("/mcp", json=body, headers=MODERN_HEADERS)
        response.raise_for_status()
        result = response.json()["result"]
        if result["isError"]:
            raise RuntimeError(f"{name}: cari_anak({query.arguments}) failed: {result['content'][0]['text']}")
        return {"structured": result["structuredContent"], "text": result["content"][0]["text"]}

    return Route(name, call, judged=False)


def sdk_client_route(name: str, client: Client) -> Route:
    """The SDK's `Client.call_tool`: the round trip, then the client's jsonschema check of the result."""

    async def call(query: Query) -> dict[str, Any]:
        return _answer(name, query, await client.call_tool("cari_anak", query.arguments))

    return Route(name, call, judged=False)


def argument_error_route(name: str, client: Client) -> Route:
    """`limit=1000`: refused by the server's argument validation, so the service is never called."""

    async def call(query: Query) -> dict[str, Any]:
        arguments = {**query.arguments, "limit": 1000}
        request = CallToolRequest(params=CallToolRequestParams(name="cari_anak", arguments=arguments))
        result = await client.session.send_request(request, CallToolResult)
        if not result.is_error or "limit" not in _text(result):
            raise RuntimeError(f"{name}: limit=1000 was not refused as an argument error: {_text(result)}")
        return {}

    return Route(name, call, judged=False, checked=False)


def server_env(folder: Path, service_url: str, **extra: str) -> dict[str, str]:
    # One subject sends every request: lift the HTTP rate limit so the benchmark measures speed, not throttling.
    return clean_env(
        folder,
        ASRAMA_API_URL=service_url,
        ASRAMA_API_TOKEN=TOKEN,
        ASRAMA_RATE_LIMIT="1000000/min",
        ASRAMA_RATE_BURST="1000000",
        **extra,
    )


async def http_server(
    stack: contextlib.AsyncExitStack, base: list[str], env: dict[str, str], errlog: Path
) -> tuple[int, int]:
    """`serve --transport http` as a process on a free port, listening; its port and pid."""
    port = free_port()
    proc = stack.enter_context(process([*base, "serve", "--transport", "http", "--port", str(port)], env, errlog))
    await wait_listening(port, proc, errlog)
    return port, proc.pid


def children() -> set[int]:
    """The pids of this process's children (Linux)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        found.update(int(pid) for pid in (task / "children").read_text().split())
    return found


def cpu_ms(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def direct_client(service_url: str) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"}
    return httpx2.AsyncClient(base_url=service_url, headers=headers)


@contextlib.asynccontextmanager
async def routes(
    folder: Path, service_url: str, args: argparse.Namespace
) -> AsyncIterator[tuple[httpx2.AsyncClient, list[Route]]]:
    """The direct client and the MCP clients (two stdio server processes, one HTTP server), ready."""
    env = server_env(folder, service_url)
    base = [EXECUTABLE, "--log-level", args.log_level]
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(direct_client(service_url))
        mcp_port, _ = await http_server(stack, base, env, folder / "mcp-http.log")
        raw = await stack.enter_async_context(httpx2.AsyncClient(base_url=f"http://127.0.0.1:{mcp_port}"))

        stdio: dict[str, Client] = {}
        over_http: dict[str, Client] = {}
        for era, _ in ERAS:
            errlog = stack.enter_context((folder / f"mcp-stdio-{era}.log").open("w"))
            server = StdioServerParameters(command=base[0], args=[*base[1:], "serve"], env=env)
            stdio[era] = await stack.enter_async_context(Client(stdio_client(server, errlog), mode=era, cache=None))
            over_http[era] = await stack.enter_async_context(
                Client(f"http://127.0.0.1:{mcp_port}/mcp", mode=era, cache=None)
            )
        modern, label = ERAS[0]
        yield (
            http,
            [
                direct_route(http),
                *(mcp_route(f"MCP stdio ({label})", stdio[era]) for era, label in ERAS),
                *(mcp_route(f"MCP HTTP ({label})", over_http[era]) for era, label in ERAS),
                *(
                    mcp_route(f"MCP HTTP ({label}), asking for progress: an SSE stream", over_http[era], progress=True)
                    for era, label in ERAS
                ),
                raw_http_route(f"MCP HTTP ({label}), POSTed by the direct route's httpx2 client", raw),
                sdk_client_route(f"MCP stdio ({label}), SDK `Client.call_tool`", stdio[modern]),
                argument_error_route(f"MCP stdio ({label}), argument error: no service call", stdio[modern]),
                argument_error_route(f"MCP HTTP ({label}), argument error: no service call", over_http[modern]),
            ],
        )


@contextlib.asynccontextmanager
async def variant_routes(
    folder: Path, db_url: str, variants: list[str], args: argparse.Namespace
) -> AsyncIterator[tuple[httpx2.AsyncClient, list[Route]]]:
    """Per variant (`http+loop`, or `auto`): a service process and our MCP server on it; its direct, stdio and HTTP
    routes."""
    base = [EXECUTABLE, "--log-level", args.log_level]
    modern = ERAS[0][0]
    found: list[Route] = []
    async with contextlib.AsyncExitStack() as stack:
        for variant in variants:
            parser, _, loop = variant.partition("+")  # "auto": the defaults (neither variable set)
            choice = {} if variant == "auto" else {"ASRAMA_HTTP": parser, "ASRAMA_LOOP": loop}
            port = free_port()
            service_log = folder / f"service-{variant}.log"
            command = [*base, "service", "--host", "127.0.0.1", "--port", str(port), "--db", db_url]
            env = clean_env(folder, ASRAMA_SERVICE_TOKEN=TOKEN, **choice)
            service = stack.enter_context(process(command, env, service_log))
            await wait_listening(port, service, service_log)
            service_url = f"http://127.0.0.1:{port}"
            env = server_env(folder, service_url, **choice)
            http = await stack.enter_async_context(direct_client(service_url))
            mcp_port, mcp_pid = await http_server(stack, base, env, folder / f"mcp-http-{variant}.log")
            errlog = stack.enter_context((folder / f"mcp-stdio-{variant}.log").open("w"))
            params = StdioServerParameters(command=base[0], args=[*base[1:], "serve"], env=env)
            before = children()
            stdio = await stack.enter_async_context(Client(stdio_client(params, errlog), mode=modern, cache=None))
            [stdio_pid] = children() - before
            over_http = await stack.enter_async_context(
                Client(f"http://127.0.0.1:{mcp_port}/mcp", mode=modern, cache=None)
            )
            direct = direct_route(http, f"{variant}: direct REST")
            direct.pid = service.pid
            found.append(direct)
            for name, client, pid in (
                (f"{variant}: MCP stdio", stdio, stdio_pid),
                (f"{variant}: MCP HTTP", over_http, mcp_pid),
            ):
                route = mcp_route(name, client)
                route.baseline, route.pid, route.upstream = direct, pid, service.pid
                found.append(route)
        yield http, found


# --- measuring -------------------------------------------------------------------------------------------


def same_students(direct: dict[str, Any], through_mcp: dict[str, Any]) -> bool:
    ours = through_mcp["structured"]
    return ours["total"] == direct["total"] and [a["id"] for a in ours["data"]] == [a["id"] for a in direct["data"]]


async def measure(all_routes: list[Route], args: argparse.Namespace) -> None:
    """Warm every route up, check its answer against the service's, then time interleaved rounds."""
    for query in TIMED:
        expected = await all_routes[0].call(query)
        for route in all_routes:
            for _ in range(args.warmup):
                answer = await route.call(query)
            if route.checked and not same_students(expected, answer):
                raise RuntimeError(f"{route.name}: {query.label} differs from the service's answer")
            route.samples[query.label] = []
    log(f"timing {args.iterations} rounds x {len(TIMED)} queries x {len(all_routes)} routes")
    cpu_before = {route.pid: cpu_ms(route.pid) for route in all_routes if route.pid is not None}
    for i in range(args.iterations):
        shift = i % len(all_routes)
        order = all_routes[shift:] + all_routes[:shift]
        for query in TIMED if i % 2 == 0 else reversed(TIMED):
            for route in order:
                started = time.perf_counter()
                await route.call(query)
                route.samples[query.label].append((time.perf_counter() - started) * 1000)
    for route in all_routes:
        if route.pid is not None:
            route.cpu_ms = cpu_ms(route.pid) - cpu_before[route.pid]


def cpu_table(all_routes: list[Route]) -> str:
    """--variants: CPU per call of each MCP server process, and of each service per request it served."""
    lines = ["| process | serves | CPU ms per request | requests |", "|---|---|---:|---:|"]
    for route in all_routes:
        if route.cpu_ms is None:
            continue
        served = [r for r in all_routes if r is route or (route.upstream is None and r.upstream == route.pid)]
        calls = sum(len(samples) for r in served for samples in r.samples.values())
        name = route.name.replace("direct REST", "data service") if route.upstream is None else route.name
        what = "direct REST and the MCP servers' upstream calls" if route.upstream is None else "`tools/call`"
        lines.append(f"| {name} | {what} | {route.cpu_ms / calls:.2f} | {calls} |")
    return "\n".join(lines)


def strip_blocklisted(data: Any) -> Any:
    """The tutorial's `sembunyikan_sensitif`: drop its three keys, recursively."""
    if isinstance(data, dict):
        return {k: strip_blocklisted(v) for k, v in data.items() if k not in TUTORIAL_BLOCKLIST}
    if isinstance(data, list):
        return [strip_blocklisted(x) for x in data]
    return data


def tutorial_text(data: Any) -> str:
    """What the tutorial's SDK put in `content[0].text` for a returned dict (indented JSON, non-ASCII as is)."""
    return json.dumps(data, indent=2, ensure_ascii=False)


@dataclass
class Size:
    query: Query
    students: int
    ours: int
    tutorial: int
    tutorial_our_fields: int


async def sizes(http: httpx2.AsyncClient, mcp: Route) -> list[Size]:
    """Bytes of the text the model reads, ours against the tutorial's shape for the same students."""
    found = []
    for query in SIZED:
        upstream = (await http.get("/anak", params=query.params)).raise_for_status().json()
        ours = await mcp.call(query)
        if not same_students(upstream, ours):
            raise RuntimeError(f"{query.label}: our result and the service's answer differ")
        fields = {k for a in ours["structured"]["data"] for k in a}
        rows = [{k: v for k, v in a.items() if k in fields} for a in upstream["data"]]
        narrow = {"total": upstream["total"], "data": rows}
        found.append(
            Size(
                query=query,
                students=len(upstream["data"]),
                ours=len(ours["text"].encode()),
                tutorial=len(tutorial_text(strip_blocklisted(upstream)).encode()),
                tutorial_our_fields=len(tutorial_text(narrow).encode()),
            )
        )
    return found


# --- report ----------------------------------------------------------------------------------------------


def verdict(met: bool) -> str:
    return "met" if met else "**MISSED**"


def latency_table(all_routes: list[Route]) -> tuple[str, bool]:
    first = all_routes[0]
    varied = any(route.baseline not in (None, first) for route in all_routes)
    lines = [
        "| route | query | p50 ms | p99 ms | p50 − direct p50 (ms) | p50 / direct p50 | target ≤ 2× | n |"
        + (f" p50 / {first.name} p50 |" if varied else ""),
        "|---|---|---:|---:|---:|---:|---|---:|" + ("---:|" if varied else ""),
    ]
    all_met = True
    for route in all_routes:
        direct = route.baseline or first
        for query in TIMED:
            samples = route.samples[query.label]
            p50 = percentile(samples, 50)
            base = percentile(direct.samples[query.label], 50)
            ratio = f"{p50 / base:.2f}×"
            if route is direct or (varied and route.baseline is None):
                target = "baseline"
            elif not route.judged:
                target = "(shown, not judged)"
            else:
                met = p50 <= LATENCY_TARGET * base
                all_met &= met
                ratio, target = f"**{ratio}**", verdict(met)
            row = [route.name, query.label, f"{p50:.2f}", f"{percentile(samples, 99):.2f}", f"{p50 - base:+.2f}"]
            row += [ratio, target, str(len(samples))]
            if varied:
                row.append(f"{p50 / percentile(first.samples[query.label], 50):.2f}×")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), all_met


def size_table(found: list[Size]) -> tuple[str, bool]:
    lines = [
        "| query | students in page | ours (bytes) | tutorial shape (bytes) | ours / tutorial | target ≤ 50% "
        "| tutorial shape, only our fields (bytes) | ours / that |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    all_met = True
    for s in found:
        met = s.ours <= SIZE_TARGET * s.tutorial
        all_met &= met
        row = [s.query.label, str(s.students), f"{s.ours:,}", f"{s.tutorial:,}", f"**{s.ours / s.tutorial:.0%}**"]
        row += [verdict(met), f"{s.tutorial_our_fields:,}", f"{s.ours / s.tutorial_our_fields:.0%}"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), all_met


def stack_versions() -> str:
    found = []
    for name in ("httptools", "uvloop"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"no {name}")
    return ", ".join(found)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def report(
    all_routes: list[Route], found: list[Size], args: argparse.Namespace, wall: float, load_before: str
) -> tuple[str, bool]:
    latency, latency_met = latency_table(all_routes)
    size, size_met = size_table(found)
    cpu = ""
    if args.variants:
        cpu = f"\nCPU (user + system, /proc) of each server process in the timed rounds:\n\n{cpu_table(all_routes)}\n"
    command = " ".join([".venv/bin/python bench/latency.py", *sys.argv[1:]])
    text = f"""Run {datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}: `{command}`. \
{os.cpu_count()} CPUs (`nproc`), load average (1/5/15 min) {load_before} before and {load()} after; \
{platform.python_implementation()} {platform.python_version()} on {platform.system()} {platform.machine()}; \
mcp {version("mcp")}, httpx2 {version("httpx2")}, uvicorn {version("uvicorn")}, {stack_versions()}. \
{STUDENTS:,} demo students, {DAYS} days of attendance, SQLite; log level {args.log_level} in every server \
process; {args.warmup} warm-up calls per query and route, then {args.iterations} interleaved rounds; \
wall time {wall:.0f} s.

Latency of one call as the caller sees it (ms):

{latency}

Latency target (each judged MCP route, p50 ≤ {LATENCY_TARGET:g}× direct REST p50): \
{"MET" if latency_met else "**MISSED**"}
{cpu}

Text the model reads (UTF-8 bytes of `content[0].text`):

{size}

Text target (ours ≤ {SIZE_TARGET:.0%} of the tutorial's bytes): {"MET" if size_met else "**MISSED**"}"""
    return text, latency_met and size_met


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (60 instead of 300)")
    parser.add_argument("--iterations", type=int, help="timed rounds (default 300, quick 60)")
    parser.add_argument("--warmup", type=int, help="untimed calls per query and route first (default 30, quick 10)")
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="of the service and MCP server processes (default INFO, as they run by default)",
    )
    parser.add_argument(
        "--variants",
        metavar="HTTP+LOOP,...",
        help="compare server stacks instead, e.g. h11+asyncio,httptools+asyncio,httptools+uvloop,auto (ASRAMA_HTTP, "
        "ASRAMA_LOOP of both servers; auto: neither set)",
    )
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (60 if args.quick else 300)
    args.warmup = args.warmup or (10 if args.quick else 30)

    started = time.perf_counter()
    load_before = load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-mcp-"))
    try:
        db_url = f"sqlite:///{folder / 'asrama.db'}"
        rows = fill_database(db_url)
        log(f"database: {STUDENTS:,} students, {rows:,} attendance rows in {time.perf_counter() - started:.1f} s")
        if args.variants:
            async with variant_routes(folder, db_url, args.variants.split(","), args) as (http, all_routes):
                await measure(all_routes, args)
                found = await sizes(http, all_routes[1])
        else:
            port = free_port()
            service_log = folder / "service.log"
            command = [EXECUTABLE, "--log-level", args.log_level, "service", "--host", "127.0.0.1"]
            env = clean_env(folder, ASRAMA_SERVICE_TOKEN=TOKEN)
            with process([*command, "--port", str(port), "--db", db_url], env, service_log) as service:
                await wait_listening(port, service, service_log)
                async with routes(folder, f"http://127.0.0.1:{port}", args) as (http, all_routes):
                    await measure(all_routes, args)
                    found = await sizes(http, all_routes[1])
        text, met = report(all_routes, found, args, time.perf_counter() - started, load_before)
        print(text)
        log("all targets met" if met else "MISSED: at least one target (see the report)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as exc:  # any error makes the numbers meaningless: say what and fail
        log(f"error: {type(exc).__name__}: {exc}")
        sys.exit(1)
