"""Settings of the MCP server (the tutorial's env names kept: ASRAMA_API_URL, ASRAMA_API_TOKEN)."""

from typing import Literal

from pydantic import AnyHttpUrl, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ServerSettings(BaseSettings):
    """Where the data service is, how long to wait for it, and how the MCP server is reached."""

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore", validate_by_name=True)

    api_url: AnyHttpUrl = AnyHttpUrl("http://localhost:8000")
    api_token: SecretStr | None = None
    api_timeout: float = Field(10.0, gt=0, le=300)
    transport: Literal["stdio", "http"] = "stdio"
    mcp_host: str = Field("127.0.0.1", validation_alias="ASRAMA_MCP_HOST")
    mcp_port: int = Field(8001, ge=1, le=65535, validation_alias="ASRAMA_MCP_PORT")

    @property
    def base_url(self) -> str:
        """The service URL without a trailing slash."""
        return str(self.api_url).rstrip("/")

    @property
    def token(self) -> str | None:
        """The service's bearer token (never sent anywhere else, never logged)."""
        return self.api_token.get_secret_value() if self.api_token else None
