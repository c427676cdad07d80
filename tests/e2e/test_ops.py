"""The tools for people, run as a person would: the probe against our stdio server, the Claude config."""

import json
import subprocess
from pathlib import Path

import pytest

from mcp_asrama import cli
from tests.e2e.conftest import EXECUTABLE, clean_env

pytestmark = pytest.mark.e2e


def probe(env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    command = [EXECUTABLE, "probe", "--compact", *flags, "--", EXECUTABLE, "serve"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)


def messages(output: str, direction: str) -> list[dict]:
    prefix = f"{direction} "
    return [json.loads(line[len(prefix) :]) for line in output.splitlines() if line.startswith(prefix)]


def test_probe_prints_every_message_of_a_modern_session(server_env: dict[str, str]) -> None:
    done = probe(server_env, "--call", "cari_anak", '{"kelas": "7A"}', "--call", "tidak_ada", "{}")
    assert done.returncode == 0, done.stderr
    sent = messages(done.stdout, ">>> client")
    received = messages(done.stdout, "<<< server")
    assert [m["method"] for m in sent] == [
        "server/discover",
        "tools/list",
        "resources/list",
        "prompts/list",
        "tools/call",
        "tools/call",
    ]
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28" for m in sent)
    by_id = {m["id"]: m for m in received}
    assert json.loads(by_id[5]["result"]["content"][0]["text"])["total"] == 2
    assert by_id[6]["error"]["code"] == -32602


def test_probe_legacy_opens_with_initialize(server_env: dict[str, str]) -> None:
    done = probe(server_env, "--legacy")
    assert done.returncode == 0, done.stderr
    sent = messages(done.stdout, ">>> client")
    assert [m["method"] for m in sent[:2]] == ["initialize", "notifications/initialized"]
    assert messages(done.stdout, "<<< server")[0]["result"]["serverInfo"]["name"] == "asrama"


def test_probe_of_a_command_that_is_not_an_mcp_server_fails_cleanly(tmp_path: Path) -> None:
    command = [EXECUTABLE, "probe", "--", "false"]
    done = subprocess.run(command, env=clean_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "session failed" in done.stderr
    assert "Traceback" not in done.stderr


def test_claude_config_names_this_install_and_hides_the_token(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASRAMA_API_TOKEN", "rahasia-jangan-dicetak")
    assert cli.main(["claude-config", "--api-url", "http://127.0.0.1:8000"]) == 0
    block = json.loads(capsys.readouterr().out)["mcpServers"]["asrama"]
    assert Path(block["command"]).is_absolute() and Path(block["command"]).exists()
    assert block["args"][-1] == "serve"
    assert block["env"]["ASRAMA_API_URL"] == "http://127.0.0.1:8000"
    assert "rahasia-jangan-dicetak" not in json.dumps(block)
    assert cli.main(["claude-config", "--with-token"]) == 0
    assert (
        json.loads(capsys.readouterr().out)["mcpServers"]["asrama"]["env"]["ASRAMA_API_TOKEN"]
        == "rahasia-jangan-dicetak"
    )


def test_claude_config_command_starts_a_working_stdio_server(server_env: dict[str, str]) -> None:
    from mcp_asrama.ops.claude_config import server_command

    command = server_command()
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    done = subprocess.run(
        command,
        env=server_env,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "asrama"
