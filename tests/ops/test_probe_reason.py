"""`mcp-asrama probe` against a stdio server that stops before answering: the server's own one-line reason (its
last stderr line) is shown, not the transport's "Connection closed"."""

import os
import subprocess
import sys
from pathlib import Path

from mcp_asrama.runtime.invocation import executable

SAYS_WHY = "import sys; print('starting', file=sys.stderr); print('\\ncannot open x: no such file\\n', file=sys.stderr)"


def probe(*server: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    command = [*executable(), "probe", "--compact", "--", *server]
    return subprocess.run(command, env={**clean, **env}, capture_output=True, text=True, timeout=120, check=False)


def test_a_server_that_refuses_its_configuration_says_why(tmp_path: Path) -> None:
    """The deploy page's old check: an audit key without an audit log. The real server exits 2 with one line."""
    key = tmp_path / "audit.key"
    key.write_text("ab" * 32)
    done = probe(*executable(), "serve", ASRAMA_AUDIT_KEY=str(key), XDG_DATA_HOME=str(tmp_path / "data"))
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "probe: the server stopped: configuration error: ASRAMA_AUDIT_KEY seals the audit log: set ASRAMA_AUDIT_LOG too"
    ]


def test_only_the_last_line_is_shown() -> None:
    done = probe(sys.executable, "-c", SAYS_WHY + "; sys.exit(3)")
    assert (done.returncode, done.stderr.splitlines()) == (
        1,
        ["probe: the server stopped: cannot open x: no such file"],
    )


def test_a_server_that_says_nothing_gets_the_transport_error() -> None:
    done = probe(sys.executable, "-c", "pass")
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["probe: session failed: MCPError: Connection closed"]


def test_with_server_log_the_log_itself_is_shown() -> None:
    command = [*executable(), "probe", "--server-log", "--", sys.executable, "-c", SAYS_WHY]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert "cannot open x: no such file" in done.stderr
    assert "probe: the server stopped" not in done.stderr
