"""What the benchmark scripts share: logging, percentiles, processes and ports, the demo database, MCP calls, CPU
readings, a baseline revision's source, the report's first line. Not a script: the scripts run as `python
bench/NAME.py`, which puts this folder on sys.path, so `import common` finds this file."""

import argparse
import asyncio
import contextlib
import os
import platform
import secrets
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, TypeVar

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult, TextContent
from sqlalchemy import Engine, insert, text
from sqlalchemy.orm import Session

from mcp_asrama.service import demo, models
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker

REPO = Path(__file__).resolve().parent.parent
EXECUTABLE = shutil.which("mcp-asrama", path=str(Path(sys.executable).parent)) or "mcp-asrama"
TOKEN = secrets.token_urlsafe(16)  # the service's bearer token in every run, as in production
STUDENTS = 1000  # the demo school of the MCP benchmarks
DAYS = 30
START_TIMEOUT = 30.0  # seconds a server process may take to listen
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
# One caller sends every request: the MCP server's HTTP rate limit lifted, so a run measures speed, not throttling.
UNLIMITED = {"ASRAMA_RATE_LIMIT": "1000000/min", "ASRAMA_RATE_BURST": "1000000"}
T = TypeVar("T")
Env = dict[str, str] | None  # settings added to a process's environment


def log(message: str) -> None:
    """Progress, on stderr (the report is stdout)."""
    print(message, file=sys.stderr, flush=True)


def percentile(samples: Sequence[float], p: int) -> float:
    """The p-th percentile (1..99), interpolated between the two nearest samples (one sample: itself)."""
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[p - 1]


def rotated(items: Sequence[T], i: int) -> list[T]:
    """`items` starting at the i-th (modulo its length): an order that rotates round by round."""
    shift = i % len(items)
    return [*items[shift:], *items[:shift]]


def verdict(met: bool) -> str:
    return "met" if met else "**MISSED**"


def parser(doc: str | None, quick: str | None = None) -> argparse.ArgumentParser:
    """A script's options, its docstring as the help; `quick`: the help of its `--quick` (None: it has none)."""
    found = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if quick:
        found.add_argument("--quick", action="store_true", help=quick)
    return found


def add_log_level(parser: argparse.ArgumentParser, default: str = "INFO", what: str = "the server processes") -> None:
    parser.add_argument(
        "--log-level", default=default, type=str.upper, choices=LOG_LEVELS, help=f"of {what} (default {default})"
    )


def run(main: Callable[[], Coroutine[Any, Any, int]], *, trace: bool = False) -> None:
    """`asyncio.run(main())` and exit with its code; an error makes every number meaningless: say which, exit 1.
    SIGTERM (a `kill`, a CI timeout) cancels the run, so that every process it started is stopped and every temporary
    folder removed, as at a normal end; it exits 143."""
    code = 1
    try:
        code = asyncio.run(_cancelled_by_sigterm(main()))
    except asyncio.CancelledError:
        log("terminated (SIGTERM): the processes and temporary folders of this run are cleaned up")
        code = 128 + signal.SIGTERM
    except Exception as exc:
        error: BaseException = exc
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:  # what the SDK's groups wrap
            error = error.exceptions[0]
        log(f"error: {type(error).__name__}: {error}")
        if trace:
            traceback.print_exception(error, file=sys.stderr)
    sys.exit(code)


async def _cancelled_by_sigterm(main: Coroutine[Any, Any, int]) -> int:
    """`main`, cancelled on SIGTERM: the `finally` and `async with` exits of the run still happen."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    return await main


# --- the report ------------------------------------------------------------------------------------------


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def versions(*packages: str) -> str:
    """'name version' of each package, or 'no name' when it is not installed."""
    found = []
    for name in packages:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"no {name}")
    return ", ".join(found)


def preamble(load_before: str | None = None) -> str:
    """'Run <when>: `<this command>`. <CPUs>, <load before and after>; <Python> on <OS>', the report's opening."""
    command = shlex.join([".venv/bin/python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    loads = f", load average (1/5/15 min) {load_before} before and {load()} after" if load_before else ""
    python = (
        f"{platform.python_implementation()} {platform.python_version()} on {platform.system()} {platform.machine()}"
    )
    return f"Run {when}: `{command}`. {os.cpu_count()} CPUs (`nproc`){loads}; {python}"


def md_row(cells: Sequence[object]) -> str:
    """One markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


# --- processes -------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(folder: Path | None = None, /, **extra: str) -> dict[str, str]:
    """This environment without the developer's ASRAMA_* settings, data in `folder` (if given), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    return {**env, **({"XDG_DATA_HOME": str(folder)} if folder else {}), **extra}


def drop_asrama_env() -> None:
    """For servers built in this process: only the settings the script gives them."""
    for name in [k for k in os.environ if k.startswith("ASRAMA_")]:
        del os.environ[name]


def server_env(folder: Path, service_url: str, /, **extra: str) -> dict[str, str]:
    """An MCP server's environment: the service at `service_url`, the rate limit lifted, plus `extra`."""
    return clean_env(folder, ASRAMA_API_URL=service_url, ASRAMA_API_TOKEN=TOKEN, **UNLIMITED, **extra)


@contextlib.contextmanager
def process(command: list[str], env: dict[str, str], stderr: Path | None) -> Iterator[subprocess.Popen[bytes]]:
    """A process with its stderr appended to a file (None: dropped); terminated (killed if need be) at the end."""
    with stderr.open("a") if stderr else contextlib.nullcontext(subprocess.DEVNULL) as errors:
        proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


async def wait_listening(port: int, proc: subprocess.Popen[bytes], stderr: Path | None, poll: float = 0.1) -> None:
    """Until something accepts on 127.0.0.1:`port`; an error if `proc` ends first or after START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = f":\n{stderr.read_text()[-2000:]}" if stderr else ""
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}{said}")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(poll)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise RuntimeError(f"nothing listens on port {port} after {START_TIMEOUT:.0f} s ({proc.args!r})")


@dataclass(frozen=True)
class Running:
    """A server process listening on 127.0.0.1."""

    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.asynccontextmanager
async def data_service(
    folder: Path, db_url: str, log_level: str, *, port: int | None = None, name: str = "service", env: Env = None
) -> AsyncIterator[Running]:
    """`mcp-asrama service` (bearer token TOKEN, plus `env`) on `db_url` as a process, listening; its log in
    `folder`/NAME.log."""
    port = port or free_port()
    errors = folder / f"{name}.log"
    command = [EXECUTABLE, "--log-level", log_level, "service", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--buat", "--db", db_url]
    with process(command, clean_env(folder, ASRAMA_SERVICE_TOKEN=TOKEN, **(env or {})), errors) as proc:
        await wait_listening(port, proc, errors)
        yield Running(port, proc.pid)


@contextlib.asynccontextmanager
async def mcp_http_server(
    folder: Path, env: dict[str, str], log_level: str, name: str = "mcp-http"
) -> AsyncIterator[Running]:
    """`mcp-asrama serve --transport http` (stateless) as a process on a free port, listening."""
    port = free_port()
    errors = folder / f"{name}.log"
    command = [EXECUTABLE, "--log-level", log_level, "serve", "--transport", "http", "--port", str(port)]
    with process(command, env, errors) as proc:
        await wait_listening(port, proc, errors)
        yield Running(port, proc.pid)


@dataclass
class Served:
    """A data service started from a source tree: a client of it, its pid, and the seconds until /healthz."""

    client: httpx2.AsyncClient
    pid: int
    start_s: float


@contextlib.asynccontextmanager
async def service_from(
    db_url: str, src: Path | None = None, *, timeout: float = 30.0, start_timeout: float = 30.0, label: str = "service"
) -> AsyncIterator[Served]:
    """`python -m mcp_asrama service` of the `src` folder (None: this environment's) on a free port, its stderr
    dropped, until it answers /healthz; a client for it with room for 16 requests in flight."""
    port = free_port()
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, **({"PYTHONPATH": str(src)} if src else {}))
    command = [sys.executable, "-m", "mcp_asrama", "--log-level", "WARNING", "service", "--host", "127.0.0.1"]
    limits = httpx2.Limits(max_connections=16, max_keepalive_connections=16)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    started = time.perf_counter()
    with process([*command, "--port", str(port), "--buat", "--db", db_url], env, None) as proc:
        base = f"http://127.0.0.1:{port}"
        async with httpx2.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=timeout) as client:
            while True:
                with contextlib.suppress(httpx2.TransportError):
                    if (await client.get("/healthz")).status_code == 200:
                        break
                if proc.poll() is not None:
                    raise RuntimeError(f"{label}: the service exited with {proc.returncode}")
                if time.perf_counter() - started > start_timeout:
                    raise RuntimeError(f"{label}: no /healthz answer within {start_timeout:.0f} s")
                await asyncio.sleep(0.05)
            yield Served(client, proc.pid, time.perf_counter() - started)


def children(pid: int | None = None) -> set[int]:
    """The pids of a process's children (default: this process's; Linux /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid or 'self'}/task").glob("*"):
        with contextlib.suppress(OSError):
            found.update(int(c) for c in (task / "children").read_text().split())
    return found


def cpu_ms(pid: int) -> float:
    """User + system CPU time (ms) of a process so far, all its threads, those ended too (Linux /proc, in clock
    ticks of 10 ms; 0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


# --- the demo school -------------------------------------------------------------------------------------


def _copy_school(engine: Engine, session: Session, school: demo.DemoSchool) -> int:
    """PostgreSQL: the school's students and rooms, the attendance streamed by COPY (executemany would take ~3
    minutes for 3 million rows)."""
    session.execute(insert(models.Kamar), school.kamar)
    session.execute(insert(models.Anak), school.anak)
    columns = ("tanggal", "id_anak", "status", "keterangan")
    count = 0
    driver: Any = session.connection().connection.driver_connection
    with driver.cursor() as cursor, cursor.copy(f"COPY absensi ({', '.join(columns)}) FROM STDIN") as copy:
        for found in school.absensi():
            copy.write_row(tuple(found[c] for c in columns))
            count += 1
    session.commit()
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("VACUUM ANALYZE"))  # what autovacuum does soon after a bulk load anyway
    return count


def fill_database(url: str, students: int = STUDENTS, days: int = DAYS, today: date | None = None) -> int:
    """The demo school (`demo.generate`, `days` of attendance up to `today`) stored at `url` with
    `demo.insert_school` (PostgreSQL: COPY); the number of attendance rows."""
    engine = make_engine(url)
    try:
        init_schema(engine)
        started = time.perf_counter()
        school = demo.generate(today or date.today(), students=students, days=days)
        generated = time.perf_counter()
        with make_sessionmaker(engine)() as session:
            if engine.dialect.name == "postgresql":
                rows = _copy_school(engine, session, school)
            else:
                rows = demo.insert_school(session, school)
    finally:
        engine.dispose()
    log(
        f"  {students:,} students, {rows:,} attendance rows: generated in {generated - started:.1f} s, "
        f"stored in {time.perf_counter() - generated:.1f} s"
    )
    return rows


def sqlite_school(path: Path, students: int, days: int, today: date | None = None) -> str:
    """The demo school in the SQLite file `path`, unless it is there already (built beside it and renamed: a file
    there is complete); its URL."""
    if path.exists():
        log(f"  {students:,} students: reusing {path}")
    else:
        partial = path.with_suffix(".partial")
        for leftover in path.parent.glob(partial.name + "*"):
            leftover.unlink()
        fill_database(f"sqlite:///{partial}", students, days, today)
        partial.rename(path)
    return f"sqlite:///{path}"


@contextlib.contextmanager
def baseline_src(rev: str) -> Iterator[Path]:
    """The `src` folder of revision `rev` (`git archive`), extracted into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="asrama-baseline-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", "--format=tar", rev, "src"],  # noqa: S607 - git from PATH
            check=True,
            capture_output=True,
        ).stdout
        tar_path = Path(folder) / "src.tar"
        tar_path.write_bytes(archive)
        with tarfile.open(tar_path) as tar:
            tar.extractall(folder, filter="data")
        yield Path(folder) / "src"


# --- MCP and direct calls --------------------------------------------------------------------------------


def direct_client(service_url: str, **options: Any) -> httpx2.AsyncClient:
    """A keep-alive client of the data service, with its bearer token: the direct route."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json"}
    return httpx2.AsyncClient(base_url=service_url, headers=headers, **options)


def tool_call(name: str, arguments: dict[str, Any]) -> CallToolRequest:
    return CallToolRequest(params=CallToolRequestParams(name=name, arguments=arguments))


async def round_trip(client: Client, request: CallToolRequest, progress_callback: Any = None) -> CallToolResult:
    """`tools/call` on the wire: the request framed and sent, the result received and parsed into its model (no
    client-side check against the tool's outputSchema, which `Client.call_tool` adds)."""
    return await client.session.send_request(request, CallToolResult, progress_callback=progress_callback)


def text_of(result: CallToolResult) -> str:
    """`content[0].text` of a result ('' when it has none)."""
    first = result.content[0] if result.content else None
    return first.text if isinstance(first, TextContent) else ""


async def stdio_session(
    stack: contextlib.AsyncExitStack, command: list[str], env: dict[str, str], errlog: Path, mode: str
) -> tuple[Client, int]:
    """The SDK's `Client` on `command` over stdio (its stderr in `errlog`), open in `stack`; and the server's pid
    (0 if it was not found)."""
    errors = stack.enter_context(errlog.open("w"))
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    before = children()
    client = await stack.enter_async_context(Client(stdio_client(params, errors), mode=mode, cache=None))
    return client, next(iter(children() - before), 0)
