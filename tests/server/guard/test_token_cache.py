"""Bearer tokens verified once (accepted until they expire, refused for a short while), bounded, and refusals
logged aggregated per reason and interval, never the token."""

import logging

import pytest
from mcp.server.auth.provider import AccessToken

from mcp_asrama.server.guard.token_cache import CachingVerifier, RefusalLog

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Idp:
    """A fake identity provider's verification: known tokens map to their AccessToken."""

    def __init__(self, tokens: dict[str, AccessToken]) -> None:
        self.tokens = tokens
        self.calls = 0

    async def check(self, token: str) -> tuple[AccessToken | None, str]:
        self.calls += 1
        found = self.tokens.get(token)
        return found, "" if found else "bad signature"


def access(subject: str, expires_at: int | None = None) -> AccessToken:
    return AccessToken(token="t", client_id="host", scopes=[], subject=subject, expires_at=expires_at)


async def test_an_accepted_token_is_remembered_until_it_expires() -> None:
    clock = Clock()
    idp = Idp({"tok-a": access("ustadz-a", expires_at=1_000_100)})
    cache = CachingVerifier(idp.check, clock=clock)
    assert (await cache.verify_token("tok-a")).subject == "ustadz-a"  # type: ignore[union-attr]
    clock.now += 99
    assert (await cache.verify_token("tok-a")) is not None
    assert idp.calls == 1
    clock.now += 1
    idp.tokens.clear()  # the provider no longer accepts it either
    assert await cache.verify_token("tok-a") is None
    assert idp.calls == 2


async def test_a_refused_token_is_remembered_briefly() -> None:
    clock = Clock()
    idp = Idp({})
    cache = CachingVerifier(idp.check, clock=clock, refusal_ttl=10)
    for _ in range(50):
        assert await cache.verify_token("forged") is None
    assert idp.calls == 1
    clock.now += 10
    assert await cache.verify_token("forged") is None
    assert idp.calls == 2


async def test_a_failing_verifier_is_a_refusal() -> None:
    async def broken(token: str) -> tuple[AccessToken | None, str]:
        raise RuntimeError("jwks unreachable")

    assert await CachingVerifier(broken).verify_token("x") is None


async def test_the_cache_is_bounded_and_keeps_no_token() -> None:
    tokens = {f"secret-{i}": access(f"s{i}") for i in range(10)}
    cache = CachingVerifier(Idp(tokens).check, clock=Clock(), max_entries=3)
    for name in tokens:
        assert (await cache.verify_token(name)).subject == tokens[name].subject  # type: ignore[union-attr]
        assert cache.remembered <= 3
    assert not any("secret" in repr(key) for key in cache._entries)


async def test_refusals_are_logged_once_per_interval_with_counts(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    cache = CachingVerifier(Idp({}).check, clock=clock, refusals=RefusalLog(interval=60, clock=clock))
    with caplog.at_level(logging.INFO, logger="mcp_asrama.server.guard.token_cache"):
        for i in range(1000):
            await cache.verify_token(f"forged-{i}")
        clock.now += 60
        await cache.verify_token("forged-last")
    lines = [r for r in caplog.records if r.getMessage() == "bearer token refused"]
    assert [getattr(r, "refused", None) for r in lines] == [{"bad signature": 1}, {"bad signature": 1000}]
    assert "forged" not in caplog.text
