"""`mcp-asrama serve` warns at start, once, as one JSON line on stderr, when ASRAMA_STATE_KEYS is set (shared keys
mean replicas finishing each other's confirmations) but confirmations are claimed in memory: each could then be used
once per replica. With a shared store, or without shared keys, it says nothing of it."""

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env, free_port

pytestmark = pytest.mark.e2e

KEYS = "kunci-rahasia-sekolah-yang-panjang-0001"


def warnings_at_start(tmp_path: Path, **env: str) -> list[dict[str, Any]]:
    """The warning lines of a stdio server started with `env` and stopped at once (stdin closed)."""
    settings = {"ASRAMA_API_URL": f"http://127.0.0.1:{free_port()}", "ASRAMA_API_TOKEN": "t", **env}
    environment = clean_env(XDG_DATA_HOME=str(tmp_path), **settings)
    done = subprocess.run([EXECUTABLE, "serve"], env=environment, input="", capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # structured: every line is JSON
    return [line for line in lines if line["level"] == "warning" and "ASRAMA_CONFIRM_STORAGE" in line["message"]]


def test_shared_keys_with_claims_in_memory_warn_once_at_start(tmp_path: Path) -> None:
    [warning] = warnings_at_start(tmp_path, ASRAMA_STATE_KEYS=KEYS)
    assert "once per replica" in warning["message"] and warning["confirm_storage"] == "memory://"
    assert KEYS not in json.dumps(warning)


@pytest.mark.parametrize(
    "env",
    [{}, {"ASRAMA_STATE_KEYS": KEYS, "ASRAMA_CONFIRM_STORAGE": "redis://127.0.0.1:6379/0"}],
    ids=["no-shared-keys", "shared-store"],
)
def test_no_warning_without_shared_keys_or_with_a_shared_store(tmp_path: Path, env: dict[str, str]) -> None:
    assert warnings_at_start(tmp_path, **env) == []
