"""This installation's command as a person types it: banners and the README name `.venv/bin/mcp-asrama` when the
console script is not on PATH, and `probe -- mcp-asrama serve` starts this installation's server all the same."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env

pytestmark = pytest.mark.e2e

SCRIPTS = Path(EXECUTABLE).parent
WITHOUT_VENV = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != SCRIPTS)


def shown(cwd: Path, path: str) -> str:
    code = "from mcp_asrama.runtime.invocation import shown; print(shown())"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=clean_env(PATH=path), capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_command_is_shown_relative_to_the_folder_it_is_typed_in() -> None:
    venv_parent = SCRIPTS.parent.parent
    assert shown(venv_parent, WITHOUT_VENV) == str(Path(EXECUTABLE).relative_to(venv_parent))
    assert shown(Path("/"), WITHOUT_VENV) == EXECUTABLE
    assert shown(Path("/"), f"{SCRIPTS}{os.pathsep}{WITHOUT_VENV}") == "mcp-asrama"


def test_probe_starts_this_installations_server_when_mcp_asrama_is_not_on_path(server_env: dict[str, str]) -> None:
    env = {**server_env, "PATH": WITHOUT_VENV}
    command = [EXECUTABLE, "probe", "--compact", "--call", "daftar_kamar", "{}", "--", "mcp-asrama", "serve"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Al-Fatih 1" in done.stdout


def test_probe_of_a_program_that_does_not_exist_says_so_in_one_line(server_env: dict[str, str]) -> None:
    command = [EXECUTABLE, "probe", "--", "mcp-asrama-tidak-ada", "serve"]
    done = subprocess.run(command, env=server_env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "probe: cannot start mcp-asrama-tidak-ada: no such program (give its path)"
    ]
