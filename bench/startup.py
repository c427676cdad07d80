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
import asyncio
import contextlib
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, and bench/mcp.py would shadow the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

EXECUTABLE = shutil.which("mcp-asrama", path=str(Path(sys.executable).parent)) or "mcp-asrama"
BARE = str(Path(__file__).resolve().parent / "bare_server.py")
MODE = "2026-07-28"
START_TIMEOUT = 30.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


async def _accepting(port: int, proc: subprocess.Popen[bytes], errlog: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}:\n{errlog.read_text()[-2000:]}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.005)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise RuntimeError(f"nothing listens on port {port} after {START_TIMEOUT:.0f} s ({proc.args!r})")


@contextlib.asynccontextmanager
async def spawned(command: list[str], env: dict[str, str], errlog: Path) -> AsyncIterator[subprocess.Popen[bytes]]:
    with errlog.open("a") as errors:
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


async def http_start(variant: Variant, errlog: Path) -> float:
    """ms from spawning the process to the parsed `tools/list` result over Streamable HTTP."""
    port = free_port()
    started = time.perf_counter()
    async with spawned(variant.command(port), variant.env, errlog) as proc:
        await _accepting(port, proc, errlog)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=MODE, cache=None) as client:
            tools = await client.list_tools()
            elapsed = time.perf_counter() - started
    if not tools.tools:
        raise RuntimeError(f"{variant.name}: no tools listed")
    return elapsed * 1000


TIMERS: dict[str, Callable[[Variant, Path], Awaitable[float]]] = {"stdio": stdio_start, "http": http_start}


def variants(folder: Path, args: argparse.Namespace) -> list[Variant]:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    ours = {
        **base_env,
        "XDG_DATA_HOME": str(folder),
        "ASRAMA_API_URL": f"http://127.0.0.1:{free_port()}",  # nothing listens: tools/list never calls it
        "ASRAMA_API_TOKEN": "bench-token",
    }
    cli = [EXECUTABLE, "--log-level", args.log_level, "serve"]
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
    log(f"timing {args.rounds} rounds x {len(all_variants)} variants")
    for i in range(args.rounds):
        shift = i % len(all_variants)
        for variant in all_variants[shift:] + all_variants[:shift]:
            before = children_cpu()
            variant.samples.append(await TIMERS[variant.transport](variant, folder / "servers.log"))
            variant.cpu.append(children_cpu() - before)
        log(f"round {i + 1}/{args.rounds}")


def children_cpu() -> float:
    """ms of user + system CPU of this process's children that have ended (the servers, once reaped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


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
        row = [variant.transport, variant.name, f"{p50:.0f}", f"{min(variant.samples):.0f}"]
        row += [f"{max(variant.samples):.0f}", ratio, f"{cpu:.0f}", cpu_ratio, str(len(variant.samples))]
        lines.append("| " + " | ".join(row) + " |")
    command = " ".join([".venv/bin/python bench/startup.py", *sys.argv[1:]])
    return f"""Run {datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}: `{command}`. {os.cpu_count()} CPUs, load \
average (1/5/15 min) {load_before} before and {load()} after; {platform.python_implementation()} \
{platform.python_version()}; log level {args.log_level}; one warm-up start per variant, then {args.rounds} \
interleaved rounds; wall time {wall:.0f} s.

Cold start, spawn to the first `tools/list` answer (SDK client, ms), and the server process's CPU (user + system,
from spawn to exit: less sensitive to the rest of the machine):

{chr(10).join(lines)}"""


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="5 rounds instead of 20")
    parser.add_argument("--rounds", type=int, help="timed rounds (default 20, quick 5)")
    parser.add_argument("--no-http", action="store_true", help="stdio only")
    parser.add_argument("--tree", metavar="DIR", help="also time `python -m mcp_asrama serve` from DIR/src")
    parser.add_argument("--log-level", default="INFO", type=str.upper, choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (5 if args.quick else 20)
    started, load_before = time.perf_counter(), load()
    folder = Path(tempfile.mkdtemp(prefix="asrama-bench-startup-"))
    try:
        all_variants = variants(folder, args)
        await measure(all_variants, folder, args)
        print(report(all_variants, args, time.perf_counter() - started, load_before))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as exc:  # any error makes the numbers meaningless: say what and fail
        log(f"error: {type(exc).__name__}: {exc}")
        sys.exit(1)
