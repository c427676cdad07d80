"""Settings of the MCP server (the tutorial's env names kept: ASRAMA_API_URL, ASRAMA_API_TOKEN)."""

from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import AnyHttpUrl, Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from mcp_asrama.config import ConnectionLimits, comma_list, is_loopback, local_token, read_token

MIN_STATE_KEY_BYTES = 32
Saluran = Literal["tampilan", "formulir", "halaman"]
KONFIRMASI: tuple[Saluran, ...] = ("tampilan", "formulir")  # ASRAMA_KONFIRMASI's default
STORAGE_URL = r"^(memory://|rediss?://\S+)$"  # a `limits` storage: this process's memory, or a shared Redis


class ServerSettings(ConnectionLimits):
    """Where the data service is, how the MCP server is reached, who may use it and how that is recorded."""

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore", validate_by_name=True)

    # The data service (upstream).
    api_url: AnyHttpUrl = AnyHttpUrl("http://localhost:8000")
    api_token: SecretStr | None = None  # on a loopback URL, default: the token the local service generated
    api_token_file: Path | None = None  # a file holding the token instead (`claude-config --db`: another database's)
    api_timeout: float = Field(10.0, gt=0, le=300)

    # How hosts reach us.
    transport: Literal["stdio", "http"] = "stdio"
    mcp_host: str = Field("127.0.0.1", validation_alias="ASRAMA_MCP_HOST")
    mcp_port: int = Field(8001, ge=1, le=65535, validation_alias="ASRAMA_MCP_PORT")
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    max_body_bytes: int = Field(1024 * 1024, ge=1024)

    # Who may (HTTP): `jwt`, an OAuth 2.1 resource server validating an external authorization server's JWT access
    # tokens; `sekolah`, this server is the authorization server itself (staff sign in with the school's accounts,
    # scopes come from the staff list).
    auth: Literal["jwt", "sekolah", "none"] = "none"
    public_url: AnyHttpUrl | None = None
    auth_issuer: str | None = None
    auth_jwks_url: AnyHttpUrl | None = None
    auth_public_key_file: Path | None = None
    auth_scope_claim: str = "asrama_scope"
    auth_required_scope: str = "asrama:read"

    # --auth sekolah: who signs in (the school's OIDC provider and/or local accounts) and how long tokens live.
    login_oidc_issuer: AnyHttpUrl | None = None
    login_oidc_client_id: str | None = None
    login_oidc_client_secret: SecretStr | None = None
    login_domains: Annotated[list[str], NoDecode] = Field(default_factory=list)
    access_token_seconds: int = Field(600, ge=60, le=3600)
    refresh_token_days: int = Field(30, ge=1, le=365)

    # What the local operator (stdio, or HTTP without auth on loopback) may see: everything unless narrowed.
    stdio_scope: Annotated[list[str], NoDecode] | None = None

    # How much, and what is recorded.
    rate_limit: str = Field("60/min", pattern=r"^[1-9]\d*/(s|sec|min|h|hour)$")
    rate_burst: int = Field(20, ge=1)
    # Where the rate-limit windows are kept: this process's memory, or a Redis every replica shares (as below).
    rate_limit_storage: str = Field("memory://", pattern=STORAGE_URL)
    audit_log: Path | None = None
    audit_key: Path | None = None  # a file holding the secret that makes the audit chain an HMAC chain

    # Whether the write tools exist at all (ASRAMA_WRITES=on); over HTTP a caller also needs the scope asrama:write.
    writes: bool = False

    # The keys that seal confirmations (`requestState`): a rotation ring, the first seals and all unseal; random
    # per process when unset (then only this process can finish a confirmation it asked for).
    state_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)

    # Where confirmations are claimed (each used once): this process's memory, or a Redis every replica shares
    # (`redis://host:6379/0`, `rediss://` with TLS; needs the `replicas` extra).
    confirm_storage: str = Field("memory://", pattern=STORAGE_URL)

    # How a person confirms a write, in order: the first the request's host can do is used (`tampilan`: the MCP Apps
    # confirm view; `formulir`: a form inside the call; `halaman`: a page in the person's browser — stdio, or with
    # --auth sekolah the server's own page for the signed-in person, where `halaman` is added by default), and
    # how long (minutes) an usulan waits for that decision.
    konfirmasi: Annotated[list[Saluran], NoDecode] = Field(default_factory=lambda: list(KONFIRMASI), min_length=1)
    usulan_menit: float = Field(10.0, gt=0, le=24 * 60)

    # Open `subscriptions/listen` streams one subject may hold at once (the total is capped below
    # ASRAMA_MAX_CONNECTIONS, so that calls and /healthz always have room).
    listen_maks: int = Field(4, ge=1, le=1000)

    # Health counts for anyone but clinic staff: only over groups of at least this many students.
    kesehatan_min_anak: int = Field(20, ge=5, le=100_000)

    _lists = field_validator(
        "allowed_origins", "stdio_scope", "state_keys", "konfirmasi", "login_domains", mode="before"
    )(comma_list)

    @field_validator("state_keys", mode="after")
    @classmethod
    def _long_enough(cls, keys: list[SecretStr]) -> list[SecretStr]:
        if any(len(key.get_secret_value().encode()) < MIN_STATE_KEY_BYTES for key in keys):
            raise ValueError(f"each ASRAMA_STATE_KEYS entry needs at least {MIN_STATE_KEY_BYTES} bytes")
        return keys

    @field_validator("audit_log", "audit_key", "api_token_file", mode="before")
    @classmethod
    def _blank_path_is_none(cls, value: object) -> object:
        """`ASRAMA_AUDIT_KEY=` (empty) means unset, not the current folder (so for the other paths)."""
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _local_service_token(self) -> Self:
        """Without ASRAMA_API_TOKEN, the token in ASRAMA_API_TOKEN_FILE; without either, a data service on this
        machine is called with the token it generated for the default database."""
        if self.api_token is None and self.api_token_file is not None:
            token = read_token(self.api_token_file.expanduser())
            self.api_token = SecretStr(token) if token else None
        elif self.api_token is None and self.api_url.host and is_loopback(self.api_url.host):
            token = local_token()
            self.api_token = SecretStr(token) if token else None
        return self

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Self:
        if self.transport == "http" and self.auth == "none" and not is_loopback(self.mcp_host):
            raise ValueError(
                f"refusing to serve children's data on {self.mcp_host} without authentication: "
                "set ASRAMA_AUTH=sekolah (with ASRAMA_PUBLIC_URL) or ASRAMA_AUTH=jwt (with ASRAMA_PUBLIC_URL, "
                "ASRAMA_AUTH_ISSUER and a JWKS URL or public key), or bind 127.0.0.1"
            )
        if self.auth == "sekolah":
            if self.public_url is None:
                raise ValueError("ASRAMA_AUTH=sekolah needs ASRAMA_PUBLIC_URL (the URL hosts reach /mcp at)")
            if self.login_oidc_issuer is not None and not self.login_oidc_client_id:
                raise ValueError("ASRAMA_LOGIN_OIDC_ISSUER needs ASRAMA_LOGIN_OIDC_CLIENT_ID")
        if self.auth == "jwt":
            missing = [
                name
                for name, value in (("ASRAMA_PUBLIC_URL", self.public_url), ("ASRAMA_AUTH_ISSUER", self.auth_issuer))
                if not value
            ]
            if missing:
                raise ValueError(f"ASRAMA_AUTH=jwt needs {' and '.join(missing)}")
            if (self.auth_jwks_url is None) == (self.auth_public_key_file is None):
                raise ValueError(
                    "ASRAMA_AUTH=jwt needs exactly one of ASRAMA_AUTH_JWKS_URL, ASRAMA_AUTH_PUBLIC_KEY_FILE"
                )
        return self

    @model_validator(mode="after")
    def _remote_page(self) -> Self:
        """With --auth sekolah, a person can decide on the server's own page: the last channel unless set."""
        if self.auth == "sekolah" and "konfirmasi" not in self.model_fields_set:
            self.konfirmasi = [*KONFIRMASI, "halaman"]
        return self

    @property
    def base_url(self) -> str:
        """The service URL without a trailing slash."""
        return str(self.api_url).rstrip("/")

    @property
    def token(self) -> str | None:
        """The service's bearer token (never sent anywhere else, never logged)."""
        return self.api_token.get_secret_value() if self.api_token else None
