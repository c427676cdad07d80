"""The disclosure audit of a real stdio server process: subject `local`, the host's name, one chain across runs,
and a key that seals it (HMAC)."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from mcp_asrama import cli
from mcp_asrama.server.guard import audit_check
from tests.e2e.conftest import EXECUTABLE

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_stdio_requests_are_audited_as_local_with_the_hosts_name(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    path = tmp_path / "audit" / "asrama-audit.jsonl"
    path.parent.mkdir()
    env = {**server_env, "ASRAMA_AUDIT_LOG": str(path)}
    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=env)
    for era, host in (("legacy", "claude-desktop-like"), ("2026-07-28", "modern-host")):  # two processes, one file
        info = Implementation(name=host, version="1")
        async with Client(params, mode=era, cache=None, client_info=info) as client:
            await client.list_tools()
            result = await client.call_tool("cari_anak", {"kelas": "7A"})
            assert not result.is_error and result.structured_content is not None

    logged = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    calls = [e for e in logged if e["method"] == "tools/call"]
    assert [(e["client"], e["subject"], e["target"], e["disclosed"]) for e in calls] == [
        ("claude-desktop-like", "local", "cari_anak", ["A001", "A003"]),
        ("modern-host", "local", "cari_anak", ["A001", "A003"]),
    ]
    assert [e["method"] for e in logged] == ["tools/call", "tools/call"]  # the handshake and lists: no line
    assert {e["subject"] for e in logged} == {"local"}
    assert "Ahmad Fauzi" not in path.read_text(encoding="utf-8")
    assert path.stat().st_mode & 0o077 == 0  # search terms may name a child: readable by the operator only
    intact, verdict = audit_check.verify(path)
    assert intact, verdict
    assert verdict.startswith(f"intact: {len(logged)} entries")
    assert [e["target"] for e in audit_check.who_saw(path, "A003")] == ["cari_anak", "cari_anak"]


async def test_a_keyed_stdio_server_seals_with_hmac_and_will_not_start_on_a_short_key(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    path, key = tmp_path / "audit.jsonl", tmp_path / "audit.key"
    key.write_text(os.urandom(32).hex())
    key.chmod(0o600)
    env = {**server_env, "ASRAMA_AUDIT_LOG": str(path), "ASRAMA_AUDIT_KEY": str(key)}
    params = StdioServerParameters(command=EXECUTABLE, args=["serve"], env=env)
    async with Client(params, mode="2026-07-28", cache=None) as client:
        assert not (await client.call_tool("detail_anak", {"id_anak": "A001"})).is_error

    [entry] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert ("hmac" in entry, "hash" in entry, entry["disclosed"]) == (True, False, ["A001"])
    assert cli.main(["audit", "verify", "--key", str(key), str(path)]) == 0
    assert cli.main(["audit", "verify", str(path)]) == 1  # a keyed log cannot be called intact without its key

    key.write_text("terlalu-pendek")
    done = subprocess.run([EXECUTABLE, "serve"], env=env, input="", capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"ASRAMA_AUDIT_KEY {key} holds 14 bytes; at least 32 are needed" in done.stderr
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1  # nothing was written
