"""Cold start: from spawning the server to the first `tools/list` answer, ours against a bare SDK server.

A script, not a test (pytest never collects it). In one run, on this machine, each round starts every variant
once, in an order that rotates every round (so noise from elsewhere hits all alike), and times:

- stdio: spawn the process and open the SDK's `Client` on it (`mode="2026-07-28"`: no probe, the first request is
  `tools/list`) until the `tools/list` result is parsed; then the client closes stdin and the process ends (not
  timed). Variants: `mcp-asrama serve` (the console script, as a host runs it) and `bench/bare_server.py` (a bare
  SDK `MCPServer` with one tool);
- HTTP (unless `--no-http`): spawn `mcp-asrama serve --transport http` / `bench/bare_server.py --http` on a free
  port, poll the port every 5 ms until it accepts, then one `tools/list` with the SDK's `Client`; the process is
  terminated afterwards (not timed).

Our server gets a service URL on a free port where nothing listens: listing tools never calls the service.
`--tree DIR` adds `python -m mcp_asrama serve` from another source tree (e.g. `git worktree add /tmp/old HEAD~1`),
to compare a change before and after in the same run.

Beside the time, each start's CPU (user + system of the server process from spawn to exit, `getrusage` of reaped
children) is shown: the start's own work, less sensitive to the rest of the machine than the wall clock.

Prints a markdown report on stdout (p50 ratio against the bare SDK server), progress on stderr; exits non-zero
only on an error (a server that does not start or answers no tools).

    .venv/bin/python bench/startup.py              # 20 rounds
    .venv/bin/python bench/startup.py --quick      # 5 rounds
"""

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import common

BARE = str(Path(__file__).resolve().parent / "bare_server.py")
MODE = "2026-07-28"


@dataclass
class Variant:
    """A server command and how its start is timed; `baseline`: the bare SDK server of the same transport."""

    name: str
    transport: str
    command: Callable[[int], list[str]]  # the command for a port (ignored on stdio)
    env: dict[str, str]
    baseline: bool = False
    samples: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # ms of CPU of the process, from spawn to exit


async def stdio_start(variant: Variant, errlog: Path) -> float:
    """ms from spawning the process to the parsed `tools/list` result over stdio."""
    command = variant.command(0)
    params = StdioServerParameters(command=command[0], args=command[1:], env=variant.env)
    with errlog.open("a") as errors:
        started = time.perf_counter()
        async with Client(stdio_client(params, errors), mode=MODE, cache=None) as client:
            tools = await client.list_tools()
            elapsed = time.perf_counter() - started
    if not tools.tools:
        raise RuntimeError(f"{variant.name}: no tools listed")
    return elapsed * 1000


async def http_start(variant: Variant, errlog: Path) -> float:
    """ms from spawning the process to the parsed `tools/list` result over Streamable HTTP."""
    port = common.free_port()
    started = time.perf_counter()
    with common.process(variant.command(port), variant.env, errlog) as proc:
        await common.wait_listening(port, proc, errlog, poll=0.005)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=MODE, cache=None) as client:
            tools = await client.list_tools()
            elapsed = time.perf_counter() - started
    if not tools.tools:
        raise RuntimeError(f"{variant.name}: no tools listed")
    return elapsed * 1000


TIMERS: dict[str, Callable[[Variant, Path], Awaitable[float]]] = {"stdio": stdio_start, "http": http_start}


def variants(folder: Path, args: argparse.Namespace) -> list[Variant]:
    base_env = common.clean_env()
    # Nothing listens at the service URL: tools/list never calls it.
    ours = common.clean_env(
        folder, ASRAMA_API_URL=f"http://127.0.0.1:{common.free_port()}", ASRAMA_API_TOKEN=common.TOKEN
    )
    cli = [common.EXECUTABLE, "--log-level", args.log_level, "serve"]
    found = [
        Variant("bare SDK `MCPServer`, one tool", "stdio", lambda _: [sys.executable, BARE], base_env, baseline=True),
        Variant("`mcp-asrama serve`", "stdio", lambda _: cli, ours),
    ]
    if args.tree:
        tree = {**ours, "PYTHONPATH": str(Path(args.tree).resolve() / "src")}
        old = [sys.executable, "-m", "mcp_asrama", "--log-level", args.log_level, "serve"]
        found.append(Variant(f"`mcp-asrama serve` from {args.tree}", "stdio", lambda _: old, tree))
    if not args.no_http:
        found += [
            Variant(
                "bare SDK `MCPServer`, one tool",
                "http",
                lambda port: [sys.executable, BARE, "--http", str(port)],
                base_env,
                baseline=True,
            ),
            Variant(
                "`mcp-asrama serve --transport http`",
                "http",
                lambda port: [*cli, "--transport", "http", "--port", str(port)],
                ours,
            ),
        ]
    return found


async def measure(all_variants: list[Variant], folder: Path, args: argparse.Namespace) -> None:
    for variant in all_variants:  # warm the file cache; checks that each one starts
        await TIMERS[variant.transport](variant, folder / "servers.log")
    common.log(f"timing {args.rounds} rounds x {len(all_variants)} variants")
    for i in range(args.rounds):
        for variant in common.rotated(all_variants, i):
            before = children_cpu()
            variant.samples.append(await TIMERS[variant.transport](variant, folder / "servers.log"))
            variant.cpu.append(children_cpu() - before)
        common.log(f"round {i + 1}/{args.rounds}")


def children_cpu() -> float:
    """ms of user + system CPU of this process's children that have ended (the servers, once reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def report(all_variants: list[Variant], args: argparse.Namespace, wall: float, load_before: str) -> str:
    lines = [
        "| transport | server | p50 ms | min ms | max ms | p50 / bare SDK p50 | CPU ms p50 | CPU / bare SDK | n |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for variant in all_variants:
        base = next(v for v in all_variants if v.baseline and v.transport == variant.transport)
        p50, cpu = statistics.median(variant.samples), statistics.median(variant.cpu)
        ratio = "baseline" if variant.baseline else f"**{p50 / statistics.median(base.samples):.2f}×**"
        cpu_ratio = "baseline" if variant.baseline else f"{cpu / statistics.median(base.cpu):.2f}×"
        cells = [variant.transport, variant.name, f"{p50:.0f}", f"{min(variant.samples):.0f}"]
        cells += [f"{max(variant.samples):.0f}", ratio, f"{cpu:.0f}", cpu_ratio, str(len(variant.samples))]
        lines.append(common.md_row(cells))
    return f"""{common.preamble(load_before)}; log level {args.log_level}; one warm-up start per variant, then \
{args.rounds} interleaved rounds; wall time {wall:.0f} s.

Cold start, spawn to the first `tools/list` answer (SDK client, ms), and the server process's CPU (user + system,
from spawn to exit: less sensitive to the rest of the machine):

{chr(10).join(lines)}"""


async def main(argv: list[str] | None = None) -> int:
    parser = common.parser(__doc__, "5 rounds instead of 20")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 20, quick 5)")
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    parser.add_argument("--tree", metavar="DIR", help="also time `python -m mcp_asrama serve` from DIR/src")
    common.add_log_level(parser, "INFO", "our server")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (5 if args.quick else 20)
    started, load_before = time.perf_counter(), common.load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-startup-"))
    try:
        all_variants = variants(folder, args)
        await measure(all_variants, folder, args)
        print(report(all_variants, args, time.perf_counter() - started, load_before))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    common.run(main)
