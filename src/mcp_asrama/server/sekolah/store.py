"""What every replica of the school's authorization server shares, kept in the data service's database
(`/oauth-state`, reached with the service token): pending sign-ins, codes, refresh tokens and their families,
client registrations, sessions and signing keys.

Every key is stored as its SHA-256 (a code, a refresh token or a session id read from the table is no use to
anyone); a `family` groups what one sign-in produced (its refresh tokens, the marks of used ones), so revoking
the family ends all of it at once. The service hides expired entries and `take` is atomic: of two concurrent
takers, one gets the value.
"""

import hashlib
from typing import Any

from mcp_asrama.client import AsramaClient
from mcp_asrama.client.exceptions import NotFound
from mcp_asrama.contract.oauth_state import StateIn

Value = dict[str, Any]


def hashed(secret: str) -> str:
    """The form a key is stored in."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class SharedState:
    """Typed access to `/oauth-state`; keys are given in clear and stored hashed."""

    def __init__(self, client: AsramaClient) -> None:
        self.client = client

    async def add(self, kind: str, key: str, value: Value, ttl: float, family: str | None = None) -> Value:
        """Store `value` unless a live one is there: the value stored (ours, or the one that was first)."""
        return (await self.client.state_add(kind, hashed(key), StateIn(value=value, ttl=ttl, family=family))).value

    async def put(self, kind: str, key: str, value: Value, ttl: float, family: str | None = None) -> None:
        await self.client.state_put(kind, hashed(key), StateIn(value=value, ttl=ttl, family=family))

    async def get(self, kind: str, key: str) -> Value | None:
        try:
            return (await self.client.state_get(kind, hashed(key))).value
        except NotFound:
            return None

    async def take(self, kind: str, key: str) -> Value | None:
        """The value, removed: at most one caller ever gets it."""
        try:
            return (await self.client.state_take(kind, hashed(key))).value
        except NotFound:
            return None

    async def drop(self, kind: str, key: str) -> None:
        await self.client.state_drop(kind, hashed(key))

    async def drop_family(self, family: str) -> int:
        return await self.client.state_drop_family(family)
