"""The disclosure audit of a real stdio server process: subject `local`, the host's name, one chain across runs."""

import json
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from mcp_asrama.server import audit_check
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
