"""The Claude Desktop block: this installation's command, and a token only where one is needed."""

import pytest

from mcp_asrama.ops.claude_config import TOKEN_PLACEHOLDER, claude_config


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
    assert "ASRAMA_WRITES" not in env_of("http://127.0.0.1:8000")
    block = claude_config("asrama", "http://127.0.0.1:8000", None, writes=True)
    assert block["mcpServers"]["asrama"]["env"]["ASRAMA_WRITES"] == "on"
