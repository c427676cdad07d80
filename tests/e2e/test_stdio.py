"""The MCP server as a host runs it: a subprocess speaking JSON-RPC lines on stdin/stdout."""

import json
import subprocess
import time
from typing import Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    ClientCapabilities,
    Implementation,
    InitializedNotification,
    InitializeRequest,
    InitializeRequestParams,
    InitializeResult,
)

from mcp_asrama.server.stdio_pipes import MAX_LINE
from tests.e2e.conftest import EXECUTABLE

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=EXECUTABLE, args=["serve"], env=env)


@pytest.mark.parametrize("era", ["legacy", "2026-07-28", "auto"])
async def test_stdio_serves_tools_in_each_era(server_env: dict[str, str], era: str) -> None:
    async with Client(params(server_env), mode=era, cache=None) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools][:2] == ["cari_anak", "detail_anak"]
        result = await client.call_tool("cari_anak", {"kelas": "7A"})
        assert not result.is_error
        assert result.structured_content["total"] == 2
        with pytest.raises(MCPError) as caught:
            await client.call_tool("tidak_ada", {})
        assert caught.value.error.code == -32602


async def test_stdio_serves_a_2025_06_18_host(server_env: dict[str, str]) -> None:
    async with stdio_client(params(server_env)) as (read, write), ClientSession(read, write) as session:
        request = InitializeRequest(
            params=InitializeRequestParams(
                protocol_version="2025-06-18",
                capabilities=ClientCapabilities(),
                client_info=Implementation(name="claude-desktop-like", version="1"),
            )
        )
        init = await session.send_request(request, InitializeResult)
        assert init.protocol_version == "2025-06-18"
        assert init.server_info.name == "asrama"
        assert init.server_info.version
        session.adopt(init)
        await session.send_notification(InitializedNotification())
        result = await session.call_tool("detail_anak", {"id_anak": "A003"})
        assert result.structured_content["nama"] == "Citra Lestari"
        assert "nik" not in result.content[0].text


def raw_session(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [EXECUTABLE, "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def exchange(process: subprocess.Popen[str], line: str) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def test_stdio_answers_malformed_lines_and_keeps_serving(server_env: dict[str, str]) -> None:
    with raw_session(server_env) as process:
        assert exchange(process, "this is not json")["error"]["code"] == -32700
        assert exchange(process, '{"jsonrpc": "2.0", "id": null, "method": "tools/list"}')["error"]["code"] == -32600
        # A line over the transport's bound (stdio_pipes.MAX_LINE) is one parse error; the next line is read as usual.
        overlong = '{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"x": "' + "a" * MAX_LINE + '"}}'
        assert exchange(process, overlong)["error"]["code"] == -32700
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        assert exchange(process, json.dumps(init))["result"]["protocolVersion"] == "2025-06-18"
        assert process.stdin is not None
        process.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "daftar_kamar", "arguments": {}}}
        answer = exchange(process, json.dumps(call))
        assert answer["id"] == 2
        assert answer["result"]["isError"] is False
        text = answer["result"]["content"][0]["text"]
        assert "\n" not in text and json.loads(text)["jumlah"] == 2
        process.kill()


def test_stdio_exits_within_a_second_of_stdin_closing_and_logs_json_to_stderr(server_env: dict[str, str]) -> None:
    with raw_session(server_env) as process:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        exchange(process, "not json")
        process.stdin.close()
        started = time.monotonic()
        process.wait(timeout=10)
        assert time.monotonic() - started < 1.0
        assert process.returncode == 0
        assert process.stdout.read() == ""
        stderr = process.stderr.read()
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines, "the server logs something to stderr"
    for line in lines:
        assert isinstance(json.loads(line), dict)
