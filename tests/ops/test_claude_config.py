"""The Claude Desktop block: this installation's command, and a token only where one is needed; with `--remote`,
mcp-remote in front of an HTTP endpoint with a bearer header (run for real in tests/e2e/test_mcp_remote.py)."""

import json
import re
from typing import Any

import pytest

from mcp_asrama.cli import main
from mcp_asrama.ops.claude_config import (
    BEARER_PLACEHOLDER,
    MCP_REMOTE,
    TOKEN_PLACEHOLDER,
    RemoteConfigError,
    claude_config,
    remote_config,
)
from mcp_asrama.server.settings import ServerSettings


def env_of(api_url: str, token: str | None = None) -> dict[str, str]:
    return dict(claude_config("asrama", api_url, token)["mcpServers"]["asrama"]["env"])


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_a_service_on_this_machine_needs_no_token_in_the_block(url: str) -> None:
    assert env_of(url) == {"ASRAMA_API_URL": url}


def test_a_remote_service_gets_a_placeholder_to_fill_in() -> None:
    assert env_of("https://data.sekolah.example")["ASRAMA_API_TOKEN"] == TOKEN_PLACEHOLDER


def test_an_explicit_token_is_written_as_given() -> None:
    assert env_of("http://127.0.0.1:8000", "rahasia")["ASRAMA_API_TOKEN"] == "rahasia"


def test_writes_are_off_unless_asked_for() -> None:
    assert not {"ASRAMA_WRITES", "ASRAMA_KONFIRMASI"} & set(env_of("http://127.0.0.1:8000"))
    block = claude_config("asrama", "http://127.0.0.1:8000", None, writes=True)
    assert block["mcpServers"]["asrama"]["env"]["ASRAMA_WRITES"] == "on"


def test_writes_are_confirmed_on_the_browser_page(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Desktop's chat shows no form and no view of a local server: its writes are confirmed on the page."""
    code, out, _ = claude_config_cli(capsys, "--writes", "--api-url", "http://127.0.0.1:8000")
    env = json.loads(out)["mcpServers"]["asrama"]["env"]
    assert code == 0
    assert (env["ASRAMA_WRITES"], env["ASRAMA_KONFIRMASI"]) == ("on", "halaman")
    for name, value in env.items():  # the server started with that block's environment
        monkeypatch.setenv(name, value)
    settings = ServerSettings()
    assert (settings.writes, settings.konfirmasi, settings.transport) == (True, ["halaman"], "stdio")


# --- --remote: mcp-remote in front of an HTTP endpoint, with a bearer header ------------------------------------

REMOTE = "https://asrama.sekolah.sch.id/mcp"


def remote_block(url: str = REMOTE, token: str | None = None) -> dict[str, Any]:
    return dict(remote_config("asrama", url, token)["mcpServers"]["asrama"])


def claude_config_cli(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str, str]:
    code = main(["claude-config", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_remote_block_runs_a_pinned_mcp_remote_with_the_header_from_its_env() -> None:
    assert remote_block(token="eyJ.abc.def") == {
        "command": "npx",
        "args": ["-y", MCP_REMOTE, REMOTE, "--header", "Authorization:${ASRAMA_TOKEN}", "--protocol", "auto"],
        "env": {"ASRAMA_TOKEN": "Bearer eyJ.abc.def"},
    }
    assert MCP_REMOTE == "mcp-remote@0.15"


def test_without_a_token_the_remote_block_holds_a_placeholder() -> None:
    assert remote_block()["env"] == {"ASRAMA_TOKEN": f"Bearer {BEARER_PLACEHOLDER}"}
    assert all(" " not in arg for arg in remote_block()["args"])  # the Windows quoting bug mcp-remote warns of


@pytest.mark.parametrize("url", ["http://127.0.0.1:8001/mcp", "http://localhost:8001/mcp"])
def test_plain_http_to_this_machine_is_allowed_as_mcp_remote_allows_it(url: str) -> None:
    assert "--allow-http" not in remote_block(url)["args"]


def test_plain_http_to_ipv6_loopback_gets_allow_http_which_mcp_remote_needs_there() -> None:
    assert remote_block("http://[::1]:8001/mcp")["args"][-1] == "--allow-http"
    assert "--allow-http" not in remote_block(REMOTE)["args"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://asrama.sekolah.sch.id/mcp", "plain http would send the token in clear; use https"),
        ("http://10.0.0.5:8001/mcp", "plain http would send the token in clear; use https"),
        ("ftp://asrama.sekolah.sch.id/mcp", "needs an http(s) URL of the MCP endpoint"),
        ("asrama.sekolah.sch.id/mcp", "needs an http(s) URL of the MCP endpoint"),
        ("https:///mcp", "needs an http(s) URL of the MCP endpoint"),
        ("https://asrama.sekolah.sch.id:99999/mcp", "needs an http(s) URL of the MCP endpoint"),
        ("https://u:rahasia@asrama.sekolah.sch.id/mcp", "must not carry credentials"),
    ],
)
def test_a_remote_url_the_token_must_not_go_to_is_refused(url: str, message: str) -> None:
    with pytest.raises(RemoteConfigError, match=re.escape(message)):
        remote_config("asrama", url, None)


def test_cli_prints_the_remote_block_without_a_secret_unless_asked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASRAMA_API_TOKEN", "token-layanan")
    code, out, err = claude_config_cli(capsys, "--remote", REMOTE)
    assert code == 0
    assert json.loads(out)["mcpServers"]["asrama"]["env"] == {"ASRAMA_TOKEN": f"Bearer {BEARER_PLACEHOLDER}"}
    assert "token-layanan" not in out
    assert "claude_desktop_config.json" in err
    assert "needs Node.js 22 or newer" in err  # npx runs mcp-remote on the staff's computer
    monkeypatch.setenv("TOKEN_SAYA", "eyJ.abc.def")
    code, out, _ = claude_config_cli(capsys, "--remote", REMOTE, "--token-env", "TOKEN_SAYA", "--name", "pesantren")
    assert code == 0
    assert json.loads(out)["mcpServers"]["pesantren"]["env"] == {"ASRAMA_TOKEN": "Bearer eyJ.abc.def"}


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        (["--remote", "http://asrama.sekolah.sch.id/mcp"], {}, "plain http would send the token in clear"),
        (["--remote", REMOTE, "--token-env", "TIDAK_ADA"], {}, "--token-env TIDAK_ADA: that environment variable"),
        (["--remote", REMOTE, "--token-env", "T"], {"T": ""}, "--token-env T: that environment variable is not"),
        (["--remote", REMOTE, "--token-env", ""], {}, "--token-env : that environment variable is not"),
        (["--remote", REMOTE, "--token-env", "T"], {"T": "Bearer eyJ"}, "give the access token alone"),
        (["--remote", REMOTE, "--token-env", "T"], {"T": "eyJ\nX-Evil: 1"}, "give the access token alone"),
        (["--remote", REMOTE, "--writes", "--with-token"], {}, "--remote takes no --with-token, --writes"),
        (["--remote", REMOTE, "--api-url", "http://127.0.0.1:8000"], {}, "--remote takes no --api-url"),
        (["--token-env", "T"], {"T": "eyJ"}, "--token-env goes with --remote"),
    ],
)
def test_cli_refuses_bad_remote_input_in_one_line_with_exit_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    env: dict[str, str],
    message: str,
) -> None:
    monkeypatch.delenv("TIDAK_ADA", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = claude_config_cli(capsys, *flags)
    assert (code, out) == (2, "")
    assert err.startswith("claude-config: ") and message in err
    assert err.count("\n") == 1
    assert "eyJ" not in err  # the token's value is never echoed


def test_cli_help_documents_the_remote_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["claude-config", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--remote URL" in text and "mcp-remote" in text
    assert "--token-env VAR" in text and "no secret is printed" in text


# --- --with-token: the service token only where the server would not send it in clear --------------------------


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (["--with-token", "--api-url", "http://data.sekolah.example:8000"], {}),
        (["--with-token", "--api-url", "http://10.0.0.5:8000", "--writes"], {}),
        (["--with-token"], {"ASRAMA_API_URL": "http://192.168.1.20:8000"}),
    ],
)
def test_with_token_refuses_a_plain_http_service_off_this_machine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str], env: dict[str, str]
) -> None:
    monkeypatch.setenv("ASRAMA_API_TOKEN", "token-layanan")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = claude_config_cli(capsys, *flags)
    assert (code, out) == (2, "")
    assert err.startswith("claude-config: --with-token http://") and "plain http would send the token in clear" in err
    assert err.count("\n") == 1 and "token-layanan" not in err


@pytest.mark.parametrize(
    "url", ["https://data.sekolah.example", "http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"]
)
def test_with_token_copies_the_token_for_https_or_this_machine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("ASRAMA_API_TOKEN", "token-layanan")
    code, out, _ = claude_config_cli(capsys, "--with-token", "--api-url", url)
    assert code == 0
    assert json.loads(out)["mcpServers"]["asrama"]["env"] == {
        "ASRAMA_API_URL": url,
        "ASRAMA_API_TOKEN": "token-layanan",
    }


def test_without_with_token_a_plain_http_service_gets_the_placeholder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = claude_config_cli(capsys, "--api-url", "http://10.0.0.5:8000")
    assert code == 0 and json.loads(out)["mcpServers"]["asrama"]["env"]["ASRAMA_API_TOKEN"] == TOKEN_PLACEHOLDER
