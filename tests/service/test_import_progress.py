"""`mcp-asrama import` shows a progress bar of the rows it checks on stderr, only when stderr is a terminal; stdout
is the same one summary line either way. Real processes: stderr a pseudo-terminal, or a pipe as in logs and CI."""

import fcntl
import os
import pty
import struct
import subprocess
import termios
from pathlib import Path

import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env

pytestmark = pytest.mark.e2e

ROWS = 40


def siswa(folder: Path) -> Path:
    path = folder / "siswa.csv"
    lines = ["id,nama,kelas,status"] + [f"S{i:03d},Santri {i:03d},7A,aktif" for i in range(ROWS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def command(folder: Path) -> list[str]:
    return [EXECUTABLE, "import", "anak", str(siswa(folder)), "--buat", "--db", str(folder / "asrama.db")]


def read_all(fd: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closed it."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO once the child has closed its end (Linux)
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_on_a_terminal_stderr_shows_the_rows_checked(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a width
    env = clean_env(XDG_DATA_HOME=str(tmp_path))
    with subprocess.Popen(command(tmp_path), env=env, stdout=subprocess.PIPE, stderr=terminal) as process:
        os.close(terminal)
        shown = read_all(controller).decode()
        out, _ = process.communicate(timeout=60)
    os.close(controller)
    assert process.returncode == 0
    assert "siswa.csv: checking" in shown and f"{ROWS}/{ROWS}" in shown and "row" in shown
    assert out.decode().startswith(f"{tmp_path / 'siswa.csv'}: {ROWS} added, 0 updated (anak)")


def test_in_a_log_stderr_stays_empty(tmp_path: Path) -> None:
    env = clean_env(XDG_DATA_HOME=str(tmp_path))
    done = subprocess.run(command(tmp_path), env=env, capture_output=True, timeout=60, check=False)
    assert done.returncode == 0
    assert done.stderr == b""
    assert done.stdout.decode().startswith(f"{tmp_path / 'siswa.csv'}: {ROWS} added, 0 updated (anak)")
