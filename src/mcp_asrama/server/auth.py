"""OAuth 2.1 resource server (to be implemented): JWT access tokens from the school's identity provider."""

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings

from mcp_asrama.server.settings import ServerSettings


def token_verifier(settings: ServerSettings) -> TokenVerifier | None:
    """The verifier of bearer tokens, or None when ASRAMA_AUTH=none."""
    return None


def auth_settings(settings: ServerSettings) -> AuthSettings | None:
    """The SDK's resource-server settings (Protected Resource Metadata, required scope), or None."""
    return None
