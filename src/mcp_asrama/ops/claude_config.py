"""`mcp-asrama claude-config`: the `claude_desktop_config.json` block for this installation."""

import json
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from mcp_asrama.config import is_loopback
from mcp_asrama.invocation import executable

TOKEN_PLACEHOLDER = "<isi dengan ASRAMA_SERVICE_TOKEN layanan data>"  # noqa: S105 - a placeholder

CONFIG_LOCATIONS = {
    "darwin": "~/Library/Application Support/Claude/claude_desktop_config.json",
    "win32": r"%APPDATA%\Claude\claude_desktop_config.json",
}


def server_command() -> list[str]:
    """The absolute command that starts this installation's MCP server over stdio."""
    return [*executable(), "serve"]


def claude_config(name: str, api_url: str, token: str | None, writes: bool = False) -> dict[str, Any]:
    """The config block: command, args and the environment the server reads. A data service on this machine needs
    no token in the block: the server uses the one the service keeps in the data folder (same user). With `writes`
    the assistant may also record (each write confirmed by the person in Claude Desktop)."""
    command, *args = server_command()
    env = {"ASRAMA_API_URL": api_url}
    if writes:
        env["ASRAMA_WRITES"] = "on"
    if token is not None:
        env["ASRAMA_API_TOKEN"] = token
    elif not is_loopback(urlsplit(api_url).hostname or ""):
        env["ASRAMA_API_TOKEN"] = TOKEN_PLACEHOLDER
    return {"mcpServers": {name: {"command": command, "args": args, "env": env}}}


def config_location() -> str:
    """Where Claude Desktop keeps its config on this platform."""
    return CONFIG_LOCATIONS.get(sys.platform, "~/.config/Claude/claude_desktop_config.json")


def render(name: str, api_url: str | None, include_token: bool, writes: bool = False) -> str:
    """The JSON text to paste, built from flags and the current environment."""
    url = api_url or os.environ.get("ASRAMA_API_URL", "http://localhost:8000")
    token = os.environ.get("ASRAMA_API_TOKEN") if include_token else None
    return json.dumps(claude_config(name, url, token, writes), indent=2, ensure_ascii=False)
