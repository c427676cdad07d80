"""A stdio start loads nothing it does not use: no PyJWT without ASRAMA_AUTH=jwt, none of our uvicorn serving, no
importlib.metadata of ours. The SDK itself loads `uvicorn.main` (through sse-starlette) and pydantic loads
importlib.metadata (its plugin lookup), so a bare SDK server's modules are the measure of what is ours."""

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

# `mcp-asrama serve` as the console script runs it, writing its modules to a file once stdin has closed.
SERVE = """
import sys
from mcp_asrama.cli import main
code = main(["serve"])
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(sorted(sys.modules)))
sys.exit(code)
"""
# A bare SDK server with one tool, built as ours is, printing its modules.
BARE = """
import sys
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
server = MCPServer("bare")
@server.tool()
def echo(text: str) -> str:
    return text
print("\\n".join(sorted(sys.modules)))
"""
# Loaded only for what a stdio start without auth does not do (h11 is used: the service client's HTTP/1.1).
UNUSED = ("jwt", "uvicorn", "importlib.metadata", "cryptography.x509", "mcp_asrama.runtime.serving")


def modules_of(script: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return set(done.stdout.split())


def unused(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == u or m.startswith(u + ".") for u in UNUSED))


async def test_a_stdio_start_loads_no_jwt_uvicorn_serving_or_metadata_of_its_own(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    written = tmp_path / "modules.txt"
    server = StdioServerParameters(command=sys.executable, args=["-c", SERVE, str(written)], env=server_env)
    async with Client(server, mode="2026-07-28", cache=None) as client:
        assert [t.name for t in (await client.list_tools()).tools][:2] == ["cari_anak", "detail_anak"]
        result = await client.call_tool("cari_anak", {"kelas": "7A"})
        assert result.structured_content is not None and result.structured_content["total"] == 2
    ours = set(written.read_text().split())
    bare = modules_of(BARE)
    assert "mcp_asrama.server.guard.auth" in ours and "mcp.server.stdio" in ours  # the modules of a real start
    assert unused(ours - bare) == []
    assert "jwt" not in ours and "mcp_asrama.runtime.serving" not in ours


def test_the_package_reads_no_metadata_for_its_version() -> None:
    script = "import sys, mcp_asrama; print(mcp_asrama.__version__, 'importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    version, loaded = done.stdout.split()
    assert version.count(".") == 2 and loaded == "False"


def test_the_data_service_alone_loads_none_of_the_mcp_server() -> None:
    # What `mcp-asrama service` imports before it serves (the demo adds the MCP server inside run_demo).
    script = "import sys, mcp_asrama.cli, mcp_asrama.runtime.launch; print('\\n'.join(sorted(sys.modules)))"
    loaded = modules_of(script)
    assert "mcp_asrama.runtime.launch" in loaded and "mcp_asrama.service.app" in loaded
    assert not {m for m in loaded if m.startswith(("mcp.server", "mcp_asrama.server", "limits", "jwt"))}
