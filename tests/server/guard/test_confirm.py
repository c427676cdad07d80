"""The claim store behind single-use confirmations: a key is claimed once within its TTL, then forgotten; bounded."""

import pytest

from mcp_asrama.server.guard.confirm import MemoryClaims, digest

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_key_is_claimed_once_within_its_ttl_then_forgotten() -> None:
    clock = Clock()
    claims = MemoryClaims(clock=clock)
    assert await claims.claim("k", ttl=600) is True
    assert await claims.claim("k", ttl=600) is False
    clock.now += 599
    assert await claims.claim("k", ttl=600) is False
    clock.now += 1
    assert await claims.claim("k", ttl=600) is True  # the state it named has expired by now: the SDK refuses it anyway


async def test_the_store_is_bounded() -> None:
    claims = MemoryClaims(max_keys=3, clock=Clock())
    for key in "abcd":
        assert await claims.claim(key, ttl=600)
    assert "a" not in claims and "d" in claims


def test_a_digest_never_holds_the_token() -> None:
    token = "v1.rahasia-state"
    assert token not in digest(token) and len(digest(token)) == 64 and digest(token) == digest(token)
