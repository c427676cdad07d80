"""Settings from the environment (pydantic-settings), passed explicitly into the factories."""

import hashlib
import ipaddress
import json
import os
import re
import secrets
from pathlib import Path
from typing import Annotated, Self

from pydantic import AnyHttpUrl, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from mcp_asrama.private_files import write_private

TOKEN_FILE = "service-token"  # noqa: S105 - a file name, not a secret
TOKENS = "tokens"  # the data folder's folder of the tokens of other SQLite databases (`token_file`)


def origin_of(url: AnyHttpUrl) -> str:
    """`scheme://host[:port]` of a URL (the port only when it is not the scheme's default)."""
    port = f":{url.port}" if url.port and url.port != {"http": 80, "https": 443}.get(url.scheme) else ""
    host = f"[{url.host}]" if url.host and ":" in url.host else url.host
    return f"{url.scheme}://{host}{port}"


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


def default_db_url() -> str:
    """The database every command uses by default: `asrama.db` in the data folder (SQLite)."""
    return f"sqlite:///{data_dir() / 'asrama.db'}"


_DATABASE_FORMS = "give a file path (SQLite) or a URL such as postgresql+psycopg://USER:PASSWORD@HOST/DBNAME"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def database_url(value: str) -> str:
    """A database setting as a SQLAlchemy URL: a URL (`…://…`) as given, a file path as an absolute SQLite URL,
    blank as the default. ValueError in one line, never with the password, for a URL that cannot be used."""
    text = value.strip()
    if not text:
        return default_db_url()
    found = _SCHEME.match(text)
    scheme = found.group() if found else ""  # named in messages: the rest may hold a password
    if "://" not in text:
        if len(scheme) > 1 and text[len(scheme) :].startswith(":"):  # `postgresql:…`, `user:pass@…`; not a drive `C:`
            raise ValueError(f"'{scheme}:…' is neither a file path nor a URL: {_DATABASE_FORMS}")
        return f"sqlite:///{Path(text).expanduser().resolve()}"
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(text)
    except (ArgumentError, ValueError):  # a malformed URL, a port that is not a number
        raise ValueError(f"'{scheme}://…' is not a database URL: {_DATABASE_FORMS}") from None
    if url.get_backend_name() not in {"sqlite", "postgresql"}:
        raise ValueError(f"'{scheme}' is not a database we support (SQLite or PostgreSQL): {_DATABASE_FORMS}")
    try:
        url.get_dialect().import_dbapi()
    except ArgumentError:  # a driver SQLAlchemy does not know
        raise ValueError(f"'{scheme}' names an unknown driver: {_DATABASE_FORMS}") from None
    except ImportError:
        if url.get_driver_name() == "psycopg":
            raise ValueError(
                "PostgreSQL needs the postgres extra: pip install 'mcp-asrama[postgres]' "
                "(in the project folder: .venv/bin/pip install -e '.[postgres]')"
            ) from None
        raise ValueError(
            f"the driver '{url.get_driver_name()}' of '{scheme}' is not installed: use postgresql+psycopg:// "
            "with the postgres extra"
        ) from None
    return text


def comma_list(value: object) -> object:
    """A list setting from the environment: `a,b` or a JSON list; entries trimmed, empty ones dropped."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return json.loads(text)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


def read_token(path: Path) -> str | None:
    """The token kept in `path`, or None when there is no such file or it is empty."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return token or None


def local_token() -> str | None:
    """The token the data service generated in the data folder for the default database, for an MCP server on the
    same machine."""
    return read_token(data_dir() / TOKEN_FILE)


def sqlite_file(db_url: str) -> Path | None:
    """The absolute path of the SQLite file `db_url` names; None for another database or SQLite in memory."""
    from sqlalchemy.engine import make_url

    parsed = make_url(db_url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).expanduser().resolve()


def token_file(db_url: str) -> Path:
    """Where the data service keeps the token it generates for `db_url`, always in the data folder: `service-token`
    for the default database (and for a PostgreSQL one), `tokens/<name>-<hash of its path>` for another SQLite file,
    so that each database has its own and none lies beside a database in a project folder."""
    path = sqlite_file(db_url)
    if path is None or path == (data_dir() / "asrama.db").resolve():
        return data_dir() / TOKEN_FILE
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:16]
    return data_dir() / TOKENS / f"{path.stem}-{digest}"


def service_token_file(db_url: str) -> Path:
    """Where the data service on `db_url` keeps its generated token: ASRAMA_SERVICE_TOKEN_FILE, else `token_file`."""
    chosen = os.environ.get("ASRAMA_SERVICE_TOKEN_FILE", "").strip()
    return Path(chosen).expanduser() if chosen else token_file(db_url)


def old_token_file(db_url: str) -> Path | None:
    """Where an earlier version kept the token of a SQLite database other than the default: beside it (None when
    that is the data folder's own `service-token`, or for another database)."""
    path = sqlite_file(db_url)
    if path is None or path.parent == data_dir().resolve():
        return None
    return path.parent / TOKEN_FILE


class DatabaseSettings(BaseSettings):
    """Where the data lives (`ASRAMA_DB_URL`: a URL or a SQLite file's path), the same for every command: all that
    commands such as `import` need."""

    model_config = SettingsConfigDict(env_prefix="ASRAMA_", extra="ignore", validate_by_name=True)

    db_url: str = Field(default_factory=default_db_url)

    _db_url = field_validator("db_url", mode="after")(database_url)


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
    service_token_file: Path | None = None  # where a generated token is kept (default: `token_file`)
    service_allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    service_allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # The change feed (GET /perubahan): seconds between its heartbeats, and how long (days) and how many events
    # the database keeps for readers that resume.
    perubahan_ping: float = Field(15.0, gt=0, le=300)
    perubahan_hari: int = Field(7, ge=1, le=3650)
    perubahan_maks: int = Field(100_000, ge=1, le=100_000_000)

    _lists = field_validator("service_allowed_hosts", "service_allowed_origins", mode="before")(comma_list)

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
        """The bearer token clients must send (None until `with_token` supplies one)."""
        return self.service_token.get_secret_value() if self.service_token else None

    def token_path(self) -> Path:
        """Where a generated token is kept: ASRAMA_SERVICE_TOKEN_FILE, else `token_file` of the database."""
        if self.service_token_file is not None:
            return self.service_token_file.expanduser()
        return token_file(self.db_url)

    def move_old_token(self) -> Path | None:
        """Move a token an earlier version kept beside the SQLite database into `token_path()` (same token, 0600),
        once; the old file's path when it was moved. Nothing when the token is set or its file is chosen."""
        old = old_token_file(self.db_url)
        if self.token is not None or self.service_token_file is not None or old is None:
            return None
        token, new = read_token(old), self.token_path()
        if token is None or new.exists():
            return None
        write_private(new, token + "\n")
        old.unlink()
        return old

    def with_token(self) -> Self:
        """These settings with a token: ASRAMA_SERVICE_TOKEN when set, else the one kept in `token_path()`,
        generated (random, 0600) on first start; `service_token_file` then names the file."""
        if self.token is not None:
            return self
        path = self.token_path()
        token = read_token(path)
        if token is None:
            token = secrets.token_urlsafe(32)
            write_private(path, token + "\n")
        return self.model_copy(update={"service_token": SecretStr(token), "service_token_file": path})
