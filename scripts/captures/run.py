"""One run of the real product for the captures: the demo school seeded as of `DAY` into a SQLite file in a temp
folder, the data service on a free port, and commands typed as the docs print them.

A command is written as shown (`127.0.0.1:8000`, `~/.local/share/mcp-asrama`, `.venv/bin/...`) and run with those
rewritten to this run's port, data folder and executables; its output is rewritten back, so a capture reads the
same on every run. What still varies per run (times, hashes, sealed state) is replaced by `<placeholders>`. A
command without ASRAMA_API_URL reaches this run's service, as one typed beside `make run` reaches the demo's.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import IO, Any

from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import seed_demo

ROOT = Path(__file__).resolve().parents[2]
DAY = date(2026, 12, 1)  # the demo school as of this day: the same students and records on every run
SHOWN_DATA = "~/.local/share/mcp-asrama"
SHOWN_ROOT = "/home/admin/mcp-asrama"  # where the docs say the project folder is
BASH = shutil.which("bash") or "/bin/bash"
PORT = re.compile(r"(127\.0\.0\.1:|localhost:|--port |--mcp-port |PORT=)(8000|8001|8090)\b")
VARYING = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00)?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{64}\b"), "<hash>"),
    (re.compile(r"process \[\d+\]"), "process [<pid>]"),
    (re.compile(r'"latency_ms": ?[0-9.]+'), '"latency_ms":<ms>'),
    (re.compile(r'"requestState": ?"[^"]+"'), '"requestState":"<requestState>"'),
    (re.compile(r"\b(eyJ[\w-]+)\.eyJ[\w-]+\.[\w-]+"), r"\1.<claims>.<signature>"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, process: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """Wait until `port` accepts connections; fail if `process` exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {port} after {timeout} s")


class Run:
    """The temp folder, the environment and the rewriting of one capture run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data = folder / "data" / "mcp-asrama"
        self.ports: dict[int, int] = {}
        self.processes: list[subprocess.Popen[Any]] = []
        self.logs: list[IO[str]] = []
        self.hidden: dict[str, str] = {}  # a per-run value as it is run -> as it is shown
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
        python_path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        self.env |= {"XDG_DATA_HOME": str(folder / "data"), "HOME": str(folder), "PYTHONPATH": python_path}

    def port(self, shown: int) -> int:
        """This run's port for the `shown` one (8000, 8001, 8090)."""
        return self.ports.setdefault(shown, free_port())

    def typed(self, line: str) -> str:
        """`line` as it runs here."""
        line = PORT.sub(lambda m: f"{m[1]}{self.port(int(m[2]))}", line)
        line = line.replace(SHOWN_DATA, str(self.data)).replace(".venv/bin/", f"{ROOT}/.venv/bin/")
        line = line.replace("bash scripts/", f"bash {ROOT}/scripts/")
        for real, shown_value in self.hidden.items():
            line = line.replace(shown_value, real)
        return line

    def shown(self, text: str) -> str:
        """Output of this run as the docs print it: ports, folders and per-run values rewritten back."""
        for real, shown_value in self.hidden.items():
            text = text.replace(real, shown_value)
        for shown_port, port in self.ports.items():
            text = text.replace(f"127.0.0.1:{port}", f"127.0.0.1:{shown_port}")
            text = text.replace(f"localhost:{port}", f"localhost:{shown_port}")
        text = text.replace(str(self.data), SHOWN_DATA).replace(str(self.folder), ".").replace(str(ROOT), SHOWN_ROOT)
        for pattern, placeholder in VARYING:
            text = pattern.sub(placeholder, text)
        return text

    def sh(self, line: str, *, stdin: str | None = None, check: bool = True) -> str:
        """`$ line` and what it printed (stdout, then stderr), as shown."""
        done = subprocess.run(  # noqa: S603 - the docs' own commands
            [BASH, "-c", self.typed(line)],
            cwd=self.folder,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"{line}: exit {done.returncode}\n{done.stderr[-2000:]}")
        return self.shown(f"$ {line}\n{done.stdout}{done.stderr}").rstrip("\n")

    def background(self, line: str, port: int | None = None, env: dict[str, str] | None = None) -> "Background":
        """Start `line` (as typed) in the background, its output kept; wait for `port` (shown) if given."""
        log = (self.folder / f"bg-{len(self.processes)}.log").open("w+")
        self.logs.append(log)
        process = subprocess.Popen(  # noqa: S603 - the docs' own commands
            [BASH, "-c", self.typed(line)],
            cwd=self.folder,
            env=self.env | (env or {}),
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # stopped as a group: bash and what it started
        )
        self.processes.append(process)
        if port is not None:
            try:
                wait_for(self.port(port), process)
            except (RuntimeError, TimeoutError) as error:
                log.seek(0)
                raise RuntimeError(f"{line}: {error}\n{log.read()[-2000:]}") from error
        return Background(self, line, process, log)

    def stdio(self, line: str) -> "Stdio":
        """A stdio MCP server started by `line`, to type JSON-RPC into."""
        process = subprocess.Popen(  # noqa: S603 - the docs' own commands
            [BASH, "-c", self.typed(line)],
            cwd=self.folder,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # stopped as a group: bash and what it started
        )
        self.processes.append(process)
        return Stdio(self, process)


class Background:
    def __init__(self, run: Run, line: str, process: subprocess.Popen[Any], log: IO[str]) -> None:
        self.run, self.line, self.process, self.log = run, line, process, log

    def printed(self, settle: float = 0.5) -> str:
        """`$ line` and what it printed so far (as shown)."""
        time.sleep(settle)
        self.log.seek(0)
        return self.run.shown(f"$ {self.line}\n{self.log.read()}").rstrip("\n")


class Stdio:
    def __init__(self, run: Run, process: subprocess.Popen[Any]) -> None:
        self.run, self.process = run, process

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one message, read the one answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.process.stdin.flush()
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer


def stop(process: subprocess.Popen[Any]) -> None:
    """Stop the process group `process` leads: SIGTERM, then SIGKILL after 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=10)
            break
        except subprocess.TimeoutExpired:
            continue
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            pipe.close()


def seeded_db(path: Path) -> Path:
    """The demo school as of `DAY` in a new SQLite file."""
    engine = make_engine(f"sqlite:///{path}")
    try:
        init_schema(engine)
        seed_demo(make_sessionmaker(engine), DAY)
    finally:
        engine.dispose()
    return path


@contextmanager
def demo_run(service: bool = True) -> Iterator[Run]:
    """A run in a new temp folder, with the data service up on the seeded demo school (shown as port 8000) unless
    `service` is false; everything it started is stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="captures-"))
    run = Run(folder)
    try:
        run.data.mkdir(parents=True)
        if service:
            seeded_db(run.data / "asrama.db")
            run.background(".venv/bin/mcp-asrama service --port 8000", port=8000)
            run.env["ASRAMA_API_URL"] = run.typed("http://127.0.0.1:8000")  # the default URL, where the service is
        yield run
    finally:
        for process in run.processes:
            stop(process)
        for log in run.logs:
            log.close()
        shutil.rmtree(folder, ignore_errors=True)
