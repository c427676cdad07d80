"""Latency and size of `cari_anak` through the MCP server, against the same query sent straight to the service.

A script, not a test (pytest never collects it). In one run, on this machine:

1. a temporary SQLite database is filled with the project's demo school (`demo.generate(date.today(),
   students=1000, days=30)`, stored with `demo.insert_school`) and the real data service is started on it as a
   process of its own (`mcp-asrama service`, bearer token required, 127.0.0.1, a free port);
2. the same `cari_anak` queries are timed, round trip as the caller sees it, along these routes
   (bench/latency_routes.py):
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
runtime/stack.py) in the same run: per variant, a data service process and our MCP server (HTTP, and stdio
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
import contextlib
import json
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client

import common
from latency_routes import (
    SIZED,
    TIMED,
    Query,
    Route,
    argument_error_route,
    direct_route,
    mcp_route,
    raw_http_route,
    sdk_client_route,
)

LATENCY_TARGET = 2.0  # MCP p50 / direct REST p50, at most
SIZE_TARGET = 0.5  # our text / the tutorial's text, at most
TUTORIAL_BLOCKLIST = frozenset({"nik", "no_hp_wali", "alamat"})
ERAS = [("2026-07-28", "2026-07-28"), ("legacy", "initialize")]


@contextlib.asynccontextmanager
async def routes(
    folder: Path, service_url: str, args: argparse.Namespace
) -> AsyncIterator[tuple[httpx2.AsyncClient, list[Route]]]:
    """The direct client and the MCP clients (two stdio server processes, one HTTP server), ready."""
    env = common.server_env(folder, service_url)
    serve = [common.EXECUTABLE, "--log-level", args.log_level, "serve"]
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(common.direct_client(service_url))
        mcp = await stack.enter_async_context(common.mcp_http_server(folder, env, args.log_level))
        raw = await stack.enter_async_context(httpx2.AsyncClient(base_url=mcp.url))
        stdio: dict[str, Client] = {}
        over_http: dict[str, Client] = {}
        for era, _ in ERAS:
            stdio[era], _ = await common.stdio_session(stack, serve, env, folder / f"mcp-stdio-{era}.log", era)
            over_http[era] = await stack.enter_async_context(Client(f"{mcp.url}/mcp", mode=era, cache=None))
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
    serve = [common.EXECUTABLE, "--log-level", args.log_level, "serve"]
    modern = ERAS[0][0]
    found: list[Route] = []
    async with contextlib.AsyncExitStack() as stack:
        for variant in variants:
            parser, _, loop = variant.partition("+")  # "auto": the defaults (neither variable set)
            choice = {} if variant == "auto" else {"ASRAMA_HTTP": parser, "ASRAMA_LOOP": loop}
            service = await stack.enter_async_context(
                common.data_service(folder, db_url, args.log_level, name=f"service-{variant}", env=choice)
            )
            env = common.server_env(folder, service.url, **choice)
            http = await stack.enter_async_context(common.direct_client(service.url))
            mcp = await stack.enter_async_context(
                common.mcp_http_server(folder, env, args.log_level, f"mcp-http-{variant}")
            )
            stdio, stdio_pid = await common.stdio_session(
                stack, serve, env, folder / f"mcp-stdio-{variant}.log", modern
            )
            over_http = await stack.enter_async_context(Client(f"{mcp.url}/mcp", mode=modern, cache=None))
            direct = direct_route(http, f"{variant}: direct REST")
            direct.pid = service.pid
            found.append(direct)
            for name, client, pid in (
                (f"{variant}: MCP stdio", stdio, stdio_pid),
                (f"{variant}: MCP HTTP", over_http, mcp.pid),
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
    common.log(f"timing {args.iterations} rounds x {len(TIMED)} queries x {len(all_routes)} routes")
    cpu_before = {route.pid: common.cpu_ms(route.pid) for route in all_routes if route.pid is not None}
    for i in range(args.iterations):
        order = common.rotated(all_routes, i)
        for query in TIMED if i % 2 == 0 else reversed(TIMED):
            for route in order:
                started = time.perf_counter()
                await route.call(query)
                route.samples[query.label].append((time.perf_counter() - started) * 1000)
    for route in all_routes:
        if route.pid is not None:
            route.cpu_ms = common.cpu_ms(route.pid) - cpu_before[route.pid]


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
            p50 = common.percentile(samples, 50)
            base = common.percentile(direct.samples[query.label], 50)
            ratio = f"{p50 / base:.2f}×"
            if route is direct or (varied and route.baseline is None):
                target = "baseline"
            elif not route.judged:
                target = "(shown, not judged)"
            else:
                met = p50 <= LATENCY_TARGET * base
                all_met &= met
                ratio, target = f"**{ratio}**", common.verdict(met)
            row = [route.name, query.label, f"{p50:.2f}", f"{common.percentile(samples, 99):.2f}", f"{p50 - base:+.2f}"]
            row += [ratio, target, str(len(samples))]
            if varied:
                row.append(f"{p50 / common.percentile(first.samples[query.label], 50):.2f}×")
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
        row += [common.verdict(met), f"{s.tutorial_our_fields:,}", f"{s.ours / s.tutorial_our_fields:.0%}"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines), all_met


def report(
    all_routes: list[Route], found: list[Size], args: argparse.Namespace, wall: float, load_before: str
) -> tuple[str, bool]:
    latency, latency_met = latency_table(all_routes)
    size, size_met = size_table(found)
    cpu = ""
    if args.variants:
        cpu = f"\nCPU (user + system, /proc) of each server process in the timed rounds:\n\n{cpu_table(all_routes)}\n"
    text = f"""{common.preamble(load_before)}; {common.versions("mcp", "httpx2", "uvicorn", "httptools", "uvloop")}. \
{common.STUDENTS:,} demo students, {common.DAYS} days of attendance, SQLite; log level {args.log_level} in every \
server process; {args.warmup} warm-up calls per query and route, then {args.iterations} interleaved rounds; \
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
    parser = common.parser(__doc__, "fewer rounds (60 instead of 300)")
    parser.add_argument("--iterations", type=int, help="timed rounds (default 300, quick 60)")
    parser.add_argument("--warmup", type=int, help="untimed calls per query and route first (default 30, quick 10)")
    common.add_log_level(parser, "INFO", "the service and MCP server processes")
    parser.add_argument(
        "--variants",
        metavar="HTTP+LOOP,...",
        help="compare server stacks instead, e.g. h11+asyncio,httptools+asyncio,httptools+uvloop,auto (ASRAMA_HTTP, "
        "ASRAMA_LOOP of both servers; auto: neither set)",
    )
    args = parser.parse_args(argv)
    args.iterations = args.iterations or (60 if args.quick else 300)
    args.warmup = args.warmup or (10 if args.quick else 30)

    started, load_before = time.perf_counter(), common.load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-latency-"))
    try:
        db_url = f"sqlite:///{folder / 'asrama.db'}"
        common.fill_database(db_url)
        if args.variants:
            async with variant_routes(folder, db_url, args.variants.split(","), args) as (http, all_routes):
                await measure(all_routes, args)
                found = await sizes(http, all_routes[1])
        else:
            async with (
                common.data_service(folder, db_url, args.log_level) as service,
                routes(folder, service.url, args) as (http, all_routes),
            ):
                await measure(all_routes, args)
                found = await sizes(http, all_routes[1])
        text, met = report(all_routes, found, args, time.perf_counter() - started, load_before)
        print(text)
        common.log("all targets met" if met else "MISSED: at least one target (see the report)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    common.run(main)
