"""`mcp-asrama claude-config`: the `claude_desktop_config.json` block for this installation, or (`--remote`) for
the `mcp-remote` bridge in front of an HTTP endpoint that requires a bearer token."""

import json
import os
import sys
from typing import Any
from urllib.parse import urlsplit

from mcp_asrama.config import is_loopback
from mcp_asrama.runtime.invocation import executable

TOKEN_PLACEHOLDER = "<isi dengan ASRAMA_SERVICE_TOKEN layanan data>"  # noqa: S105 - a placeholder
# npm range of the bridge: the 0.15 line (in 0.x a minor release may break); scripts/mcp-remote.sh tests 0.15.1.
MCP_REMOTE = "mcp-remote@0.15"
BEARER_ENV = "ASRAMA_TOKEN"  # the block's env carries `Bearer <token>`: no space inside args (Windows quoting)
BEARER_PLACEHOLDER = "<isi dengan access token dari penyedia identitas sekolah>"
MCP_REMOTE_LOCALHOST = {"localhost", "127.0.0.1"}  # what mcp-remote itself lets through over plain http

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
    the assistant may also record, each write confirmed by the person on a page the server opens in their browser
    (`ASRAMA_KONFIRMASI=halaman`: Claude Desktop's chat declares form elicitation but never shows the form, and
    shows no MCP Apps view of a local server)."""
    command, *args = server_command()
    env = {"ASRAMA_API_URL": api_url}
    if writes:
        env["ASRAMA_WRITES"] = "on"
        env["ASRAMA_KONFIRMASI"] = "halaman"
    if token is not None:
        env["ASRAMA_API_TOKEN"] = token
    elif not is_loopback(urlsplit(api_url).hostname or ""):
        env["ASRAMA_API_TOKEN"] = TOKEN_PLACEHOLDER
    return {"mcpServers": {name: {"command": command, "args": args, "env": env}}}


class RemoteConfigError(ValueError):
    """A URL or token the block must not carry (`--remote`, `--with-token`); the message is one line for the
    terminal."""


def in_clear(scheme: str, host: str) -> bool:
    """Whether a token sent to `scheme://host` would cross the network unencrypted: plain http off this machine."""
    return scheme == "http" and not is_loopback(host)


def remote_url(url: str) -> str:
    """`url` if the bridge may send a bearer token to it: https, or http to this machine only."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise RemoteConfigError("--remote URL must not carry credentials; the token goes in the Authorization header")
    host = parts.hostname or ""
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        host = ""
    if parts.scheme not in ("https", "http") or not host:
        raise RemoteConfigError(f"--remote needs an http(s) URL of the MCP endpoint, got {url!r}")
    if in_clear(parts.scheme, host):
        raise RemoteConfigError(f"--remote {url}: plain http would send the token in clear; use https")
    return url


def bearer_token(env_name: str) -> str:
    """The access token held in environment variable `env_name`: present, one word, without `Bearer `."""
    token = os.environ.get(env_name, "")
    if not token:
        raise RemoteConfigError(f"--token-env {env_name}: that environment variable is not set or empty")
    if token.split() != [token] or not token.isprintable():
        raise RemoteConfigError(f"--token-env {env_name}: give the access token alone (no spaces, no 'Bearer ')")
    return token


def remote_config(name: str, url: str, token: str | None) -> dict[str, Any]:
    """The block that runs `mcp-remote` as Claude Desktop's stdio server: it sends `Authorization: Bearer <token>`
    on every request to `url` (the header's value comes from the block's env, so no space is inside the args) and
    speaks to the endpoint in the 2026-07-28 era where it can (`--protocol auto`: confirmations of writes reach
    the person even though the endpoint keeps no sessions). Without `token` the env holds a placeholder."""
    args = ["-y", MCP_REMOTE, remote_url(url), "--header", f"Authorization:${{{BEARER_ENV}}}", "--protocol", "auto"]
    parts = urlsplit(url)
    if parts.scheme == "http" and parts.hostname not in MCP_REMOTE_LOCALHOST:
        args.append("--allow-http")  # e.g. [::1]: loopback (checked above), which mcp-remote does not recognise
    env = {BEARER_ENV: f"Bearer {token or BEARER_PLACEHOLDER}"}
    return {"mcpServers": {name: {"command": "npx", "args": args, "env": env}}}


def config_location() -> str:
    """Where Claude Desktop keeps its config on this platform."""
    return CONFIG_LOCATIONS.get(sys.platform, "~/.config/Claude/claude_desktop_config.json")


def render(name: str, api_url: str | None, include_token: bool, writes: bool = False) -> str:
    """The JSON text to paste, built from flags and the current environment; with `include_token` only for a
    service reached over https or on this machine (the server would send that token in clear otherwise)."""
    url = api_url or os.environ.get("ASRAMA_API_URL", "http://localhost:8000")
    parts = urlsplit(url)
    if include_token and in_clear(parts.scheme, parts.hostname or ""):
        raise RemoteConfigError(f"--with-token {url}: plain http would send the token in clear; use https")
    token = os.environ.get("ASRAMA_API_TOKEN") if include_token else None
    if not is_loopback(parts.hostname or ""):
        print(service_token_warning(parts.hostname or url), file=sys.stderr)
    return json.dumps(claude_config(name, url, token, writes), indent=2, ensure_ascii=False)


def service_token_warning(host: str) -> str:
    """The one line said when the block points at a data service on another machine: the service token reads every
    child's record, so the PC holding the block holds the whole school."""
    return (
        f"claude-config: warning: the service token lets this PC read every child's record (NIK, phone, address) "
        f"from {host}; for a staff member's PC use the remote connector instead (claude-config --remote "
        "https://<server>/mcp, docs/staff-devices.md)"
    )


def render_remote(name: str, url: str, token_env: str | None) -> str:
    """The JSON text to paste for `--remote`; the token only when `token_env` names the variable holding it."""
    token = bearer_token(token_env) if token_env is not None else None
    return json.dumps(remote_config(name, url, token), indent=2, ensure_ascii=False)
