"""`/oauth-state`: the shared state of the school's own sign-in (`--auth sekolah`) as the MCP server stores it in
the data service: a JSON object by kind and key, living `ttl` seconds, optionally in a family dropped together.

Keys are opaque to the service: for a secret (an authorization code, a refresh token) the caller sends its hash.
"""

import hashlib
import json
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from mcp_asrama.contract.pengurus import fold_email
from mcp_asrama.contract.types import Shape, Strict

KIND_PATTERN = r"^[a-z_]{1,20}$"
KEY_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
MAX_VALUE_BYTES = 16 * 1024
MAX_TTL = 400 * 24 * 3600.0


def person_family(email: str) -> str:
    """What every family of one person's sign-ins starts with (`<this>.<id>`: their sessions and each grant's
    tokens), so that all of them can be ended at once: 24 hex digits of the SHA-256 of the folded email."""
    return hashlib.sha256(fold_email(email).encode()).hexdigest()[:24]


def _small(value: dict[str, Any]) -> dict[str, Any]:
    """Refuse a value over 16 KiB as compact JSON."""
    if len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()) > MAX_VALUE_BYTES:
        raise ValueError(f"value is larger than {MAX_VALUE_BYTES} bytes as JSON")
    return value


class StateIn(Strict):
    """`POST` (add) and `PUT` (store) `/oauth-state/{kind}/{key}` body."""

    value: Annotated[dict[str, Any], AfterValidator(_small), Field(description="a JSON object of at most 16 KiB")]
    ttl: Annotated[float, Field(gt=0, le=MAX_TTL, description="seconds until it expires (at most 400 days)")]
    family: Annotated[
        str | None, Field(pattern=KEY_PATTERN, description="rows dropped together by DELETE /oauth-state?family=")
    ] = None


class State(Shape):
    """A stored value; `created`: whether this request stored it (an add or store of a key not held)."""

    value: dict[str, Any]
    created: bool = False


class Dropped(Shape):
    """`DELETE /oauth-state?family=`: how many rows went."""

    deleted: int
