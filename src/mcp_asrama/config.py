"""Settings from the environment (pydantic-settings), passed explicitly into the factories."""

import ipaddress
import os
from pathlib import Path
from typing import Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def data_dir() -> Path:
    """Where the SQLite files live by default: $XDG_DATA_HOME/mcp-asrama or ~/.local/share/mcp-asrama."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "mcp-asrama"


def default_db_url(name: str = "asrama.db") -> str:
    """A SQLite URL for a file in the data directory."""
    return f"sqlite:///{data_dir() / name}"


class DatabaseSettings(BaseSettings):
    """Where the data lives (`ASRAMA_DB_URL`): all that commands such as `import` need."""

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore", validate_by_name=True)

    db_url: str = Field(default_factory=default_db_url)


class ConnectionLimits(BaseSettings):
    """How long a client may take to send a request, and how many connections one server holds at once.

    Shared by the data service and the MCP server (the same environment names for both).
    """

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore", validate_by_name=True)

    header_timeout: float = Field(10.0, gt=0, le=300)  # seconds from connecting to the end of the headers
    body_timeout: float = Field(30.0, gt=0, le=3600)  # seconds from the end of the headers to the end of the body
    max_connections: int = Field(256, ge=1, le=100_000)  # open connections; beyond them new ones are closed


class ServiceSettings(DatabaseSettings, ConnectionLimits):
    """The data service: where it listens, where it stores, which token it requires."""

    host: str = Field("127.0.0.1", validation_alias="ASRAMA_SERVICE_HOST")
    port: int = Field(8000, ge=1, le=65535, validation_alias="ASRAMA_SERVICE_PORT")
    service_token: SecretStr | None = None

    @field_validator("service_token", mode="after")
    @classmethod
    def _blank_token_is_no_token(cls, value: SecretStr | None) -> SecretStr | None:
        token = value.get_secret_value().strip() if value else ""
        return SecretStr(token) if token else None

    @model_validator(mode="after")
    def _refuse_open_network_bind(self) -> Self:
        if not self.token and not is_loopback(self.host):
            raise ValueError(
                f"refusing to serve student data on {self.host} without a token: "
                "set ASRAMA_SERVICE_TOKEN or bind 127.0.0.1"
            )
        return self

    @property
    def token(self) -> str | None:
        """The bearer token clients must send, or None when the service is open (loopback only)."""
        return self.service_token.get_secret_value() if self.service_token else None
