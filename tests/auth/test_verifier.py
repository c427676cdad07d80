"""The token verifier itself (no MCP server): why each bad token is refused, what an accepted one yields, and the
JWKS cache's timing (a fake clock; the JWKS still comes over HTTP from the stand-in identity provider)."""

import logging
import time
from pathlib import Path

import anyio
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from mcp_asrama.server.guard import auth
from mcp_asrama.server.guard.auth import AuthConfigError, JwksKeys, JwtVerifier, Rejected, load_public_key, signing_keys
from mcp_asrama.server.guard.token_cache import CachingVerifier
from mcp_asrama.server.settings import ServerSettings
from tests.auth.idp import Idp, hmac_signed, new_rsa_key, public_pem, unsigned

AUD = "https://asrama.example.sch.id/mcp"
pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def idp() -> "Idp":
    with Idp() as provider:
        provider.add_key("k1")
        yield provider


def verifier(idp: Idp, **jwks: float) -> JwtVerifier:
    return JwtVerifier(issuer=idp.issuer, resource=AUD, keys=JwksKeys(idp.jwks_url, **jwks))


async def test_accepted_token_yields_subject_client_scopes_resource_and_all_claims(idp: Idp) -> None:
    token = idp.mint(AUD, scope="openid asrama:read", scp=["extra"], asrama_scope=["kamar:Al-Fatih 1"])
    access = await verifier(idp).verify_token(token)
    assert access is not None
    assert access.token == token
    assert (access.subject, access.client_id, access.resource) == ("f3c1a9e0-ust-ridwan", "claude-desktop", AUD)
    assert access.scopes == ["openid", "asrama:read", "extra"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert access.claims == claims
    assert access.expires_at == claims["exp"] + auth.LEEWAY


async def test_client_id_falls_back_to_client_id_claim_then_sub(idp: Idp) -> None:
    v = verifier(idp)
    with_client_id = await v.verify_token(idp.mint(AUD, azp=None, client_id="inspector"))
    only_sub = await v.verify_token(idp.mint(AUD, azp=None))
    assert with_client_id is not None and with_client_id.client_id == "inspector"
    assert only_sub is not None and only_sub.client_id == "f3c1a9e0-ust-ridwan"


REASONS = {
    "expired": (lambda idp: idp.mint(AUD, exp=int(time.time()) - 60), "expired"),
    "not_yet_valid": (lambda idp: idp.mint(AUD, nbf=int(time.time()) + 60), "not yet valid"),
    "wrong_audience": (lambda idp: idp.mint("https://other.example/mcp"), "wrong audience"),
    "audience_not_a_url": (lambda idp: idp.mint(["account", 7]), "wrong audience"),
    "wrong_issuer": (lambda idp: idp.mint(AUD, iss="https://evil.example/realms/sekolah"), "wrong issuer"),
    "no_exp": (lambda idp: idp.mint(AUD, exp=None), "missing claim exp"),
    "no_sub": (lambda idp: idp.mint(AUD, sub=None), "missing claim sub"),
    "empty_sub": (lambda idp: idp.mint(AUD, sub=""), "bad sub"),
    "forged": (lambda idp: idp.mint(AUD, key=new_rsa_key()), "bad signature"),
    "alg_none": (lambda idp: unsigned({"alg": "none", "kid": "k1"}, idp.claims(AUD)), "algorithm not allowed"),
    "hs256_public_key": (
        lambda idp: hmac_signed({"alg": "HS256", "kid": "k1"}, idp.claims(AUD), public_pem(idp.keys["k1"])),
        "algorithm not allowed",
    ),
    "es256_on_rsa_key": (
        lambda idp: jwt.encode(idp.claims(AUD), ec.generate_private_key(ec.SECP256R1()), "ES256", {"kid": "k1"}),
        "algorithm does not fit the key",
    ),
    "ps256_where_the_jwk_says_rs256": (
        lambda idp: idp.mint(AUD, alg="PS256"),
        "algorithm does not fit the key",
    ),
    "unknown_kid": (lambda idp: idp.mint(AUD, kid="nope", key=new_rsa_key()), "unknown kid"),
    "no_kid": (lambda idp: jwt.encode(idp.claims(AUD), idp.keys["k1"], "RS256"), "no kid"),
    "garbage": (lambda idp: "garbage", "malformed"),
    "too_long": (lambda idp: "x" * (auth.MAX_TOKEN_CHARS + 1), "too long"),
}


@pytest.mark.parametrize(("make", "reason"), REASONS.values(), ids=REASONS.keys())
async def test_refusal_reasons(idp: Idp, make: object, reason: str, caplog: pytest.LogCaptureFixture) -> None:
    token = make(idp)  # type: ignore[operator]
    v = verifier(idp)
    with pytest.raises(Rejected, match=f"^{reason}$"):
        await v._claims(token)
    assert await v.check(token) == (None, reason)
    cached = CachingVerifier(v.check)
    with caplog.at_level(logging.INFO, logger="mcp_asrama.server.guard.token_cache"):
        assert await cached.verify_token(token) is None
    refused = [r for r in caplog.records if r.getMessage() == "bearer token refused"]
    assert [getattr(r, "refused", None) for r in refused] == [{reason: 1}]
    assert token[:40] not in caplog.text


# --- the JWKS cache ---------------------------------------------------------------------------------------


async def test_jwks_is_cached_for_its_ttl_then_fetched_again(idp: Idp) -> None:
    clock = Clock()
    keys = JwksKeys(idp.jwks_url, ttl=300, cooldown=30, clock=clock)
    assert await keys.key("k1") is not None
    clock.now += 299
    assert await keys.key("k1") is not None
    assert idp.jwks_requests == 1
    clock.now += 1
    assert await keys.key("k1") is not None
    assert idp.jwks_requests == 2


async def test_unknown_kids_refetch_at_most_once_per_cooldown(idp: Idp) -> None:
    clock = Clock()
    keys = JwksKeys(idp.jwks_url, ttl=300, cooldown=30, clock=clock)
    assert await keys.key("k1") is not None
    assert await keys.key("x1") is None  # first unknown kid: one refetch
    assert idp.jwks_requests == 2
    for n in range(20):
        clock.now += 1
        assert await keys.key(f"y{n}") is None
    assert idp.jwks_requests == 2
    idp.add_key("k2")
    clock.now += 10  # 30 s since the last refetch: the next unknown kid may look again
    assert await keys.key("k2") is not None
    assert idp.jwks_requests == 3


async def test_concurrent_lookups_of_an_unknown_kid_share_one_fetch(idp: Idp) -> None:
    keys = JwksKeys(idp.jwks_url, clock=Clock())
    results: list[object] = []

    async def look(kid: str) -> None:
        results.append(await keys.key(kid))

    async with anyio.create_task_group() as tasks:
        for n in range(10):
            tasks.start_soon(look, f"bogus{n}")
        tasks.start_soon(look, "k1")
    assert results.count(None) == 10
    assert idp.jwks_requests == 1  # one fetch served them all: the lock holds the others until it is done


async def test_a_slow_refresh_stalls_only_the_request_that_makes_it(idp: Idp) -> None:
    clock = Clock()
    keys = JwksKeys(idp.jwks_url, ttl=300, clock=clock)
    assert await keys.key("k1") is not None
    clock.now += 301  # stale: the next lookup refreshes
    idp.delay = 1.0
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(keys.key, "k1")
        await anyio.sleep(0.2)
        with anyio.fail_after(0.5):
            assert await keys.key("k1") is not None  # served the known key meanwhile
    assert idp.jwks_requests == 2


async def test_failed_fetch_keeps_known_keys_and_waits_before_retrying(idp: Idp) -> None:
    clock = Clock()
    keys = JwksKeys(idp.jwks_url, ttl=300, cooldown=30, retry_after=5, timeout=2, clock=clock)
    assert await keys.key("k1") is not None
    idp.stop()  # the IdP goes down
    clock.now += 301  # the cache has expired
    assert await keys.key("k1") is not None  # a failed refresh keeps what we had
    assert keys.fetches == 2
    clock.now += 1
    assert await keys.key("k1") is not None
    assert keys.fetches == 2  # no retry within retry_after
    clock.now += 5
    await keys.key("k1")
    assert keys.fetches == 3


async def test_jwks_service_that_never_answered_refuses_without_raising() -> None:
    from tests.e2e.conftest import free_port

    keys = JwksKeys(f"http://127.0.0.1:{free_port()}/certs", timeout=2, clock=Clock())
    v = JwtVerifier(issuer="https://idp.example", resource=AUD, keys=keys)
    token = jwt.encode({"sub": "x", "exp": int(time.time()) + 60}, new_rsa_key(), "RS256", {"kid": "k1"})
    assert await v.verify_token(token) is None


def test_signing_keys_skips_what_cannot_verify_our_algorithms() -> None:
    rsa_key = new_rsa_key()
    weak = new_rsa_key(1024)
    good = jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key.public_key(), as_dict=True)
    jwks = {
        "keys": [
            {**good, "kid": "good"},
            {**good, "kid": "enc", "use": "enc"},
            {**good, "kid": "oaep", "alg": "RSA-OAEP"},
            {**good},  # no kid
            {**jwt.algorithms.RSAAlgorithm.to_jwk(weak.public_key(), as_dict=True), "kid": "weak"},
            {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"},
            {**jwt.algorithms.RSAAlgorithm.to_jwk(rsa_key, as_dict=True), "kid": "private"},
            "not a key",
        ]
    }
    keys = signing_keys(jwks)
    assert list(keys) == ["good"]
    assert keys["good"][1] == auth.RSA_ALGORITHMS
    with pytest.raises(ValueError):
        signing_keys(["not", "a", "set"])


# --- the public key file -------------------------------------------------------------------------------------


def _pem(key: object) -> bytes:
    return key.public_bytes(  # type: ignore[attr-defined, no-any-return]
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def test_public_key_file_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(AuthConfigError, match="cannot read"):
        load_public_key(tmp_path / "missing.pem")
    (tmp_path / "junk.pem").write_text("hello")
    with pytest.raises(AuthConfigError, match="not a PEM public key"):
        load_public_key(tmp_path / "junk.pem")
    (tmp_path / "weak.pem").write_bytes(public_pem(new_rsa_key(1024)))
    with pytest.raises(AuthConfigError, match="at least 2048 bits"):
        load_public_key(tmp_path / "weak.pem")
    (tmp_path / "ed.pem").write_bytes(_pem(ed25519.Ed25519PrivateKey.generate().public_key()))
    with pytest.raises(AuthConfigError, match="EC P-256/P-384"):
        load_public_key(tmp_path / "ed.pem")


async def test_ec_public_key_file_accepts_es256(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "ec.pem"
    path.write_bytes(_pem(key.public_key()))
    v = JwtVerifier(issuer="https://idp.example", resource=AUD, keys=load_public_key(path))
    claims = {"iss": "https://idp.example", "aud": AUD, "sub": "s", "exp": int(time.time()) + 60}
    assert await v.verify_token(jwt.encode(claims, key, "ES256")) is not None
    assert await v.verify_token(jwt.encode(claims, new_rsa_key(), "RS256")) is None


# --- settings --------------------------------------------------------------------------------------------------


def test_no_auth_means_no_verifier_and_no_auth_settings() -> None:
    settings = ServerSettings()
    assert auth.token_verifier(settings) is None
    assert auth.auth_settings(settings) is None


def test_auth_settings_name_the_resource_issuer_and_scope(idp: Idp) -> None:
    settings = ServerSettings(auth="jwt", public_url=AUD, auth_issuer=idp.issuer, auth_jwks_url=idp.jwks_url)
    sdk = auth.auth_settings(settings)
    assert sdk is not None
    assert (str(sdk.issuer_url), str(sdk.resource_server_url)) == (idp.issuer, AUD)
    assert sdk.required_scopes == ["asrama:read"]
    assert sdk.validate_token_resource is True
    assert isinstance(auth.token_verifier(settings), CachingVerifier)


def test_issuer_must_be_a_url(idp: Idp) -> None:
    settings = ServerSettings(auth="jwt", public_url=AUD, auth_issuer="sekolah", auth_jwks_url=idp.jwks_url)
    with pytest.raises(AuthConfigError, match="ASRAMA_AUTH_ISSUER"):
        auth.auth_settings(settings)
