"""OAuth 2.1 resource server: JWT access tokens from the school's identity provider, checked with the SDK's pieces.

A token is accepted when all of these hold, and refused (`None`, hence HTTP 401) otherwise:
- its header names an asymmetric algorithm this server allows (never `none`, never an HMAC: a public key cannot
  be abused as an HMAC secret) that fits the key, and its signature verifies with the identity provider's key:
  from the JWKS URL (cached; an unknown `kid` triggers a refetch, at most one per cooldown) or a PEM file;
- `iss` is ASRAMA_AUTH_ISSUER; `aud` contains ASRAMA_PUBLIC_URL (this resource); `exp` (required) and `nbf` hold
  with a leeway of `LEEWAY` seconds; `sub` is present.
The required scope (`asrama:read`, from `scope` or `scp`) is not checked here: the SDK answers its absence with
403 `insufficient_scope`. Tokens are never logged; refusals are counted by reason (token_cache logs them).
PyJWT and cryptography's x509 are imported where they are used, so a server without ASRAMA_AUTH=jwt never loads
them (a faster start).
"""

import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl, ValidationError

from mcp_asrama.server.guard.token_cache import CachingVerifier
from mcp_asrama.server.settings import ServerSettings

log = logging.getLogger(__name__)

RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384"}
ALGORITHMS = frozenset((*RSA_ALGORITHMS, *EC_ALGORITHMS.values()))
LEEWAY = 30  # seconds of clock skew tolerated on exp, nbf and iat
MIN_RSA_BITS = 2048
MAX_TOKEN_CHARS = 16 * 1024

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
VerifyingKey = tuple[PublicKey, tuple[str, ...]]  # a key and the algorithms it may verify


class AuthConfigError(ValueError):
    """The authentication settings cannot work (unreadable key file, unusable key, issuer not a URL)."""


class Rejected(Exception):
    """A token this server does not accept; the message is a reason fit for the log (never the token)."""


def algorithms_for(key: object) -> tuple[str, ...]:
    """The allowed algorithms a public key can verify: none for weak RSA keys and other key types."""
    if isinstance(key, rsa.RSAPublicKey):
        return RSA_ALGORITHMS if key.key_size >= MIN_RSA_BITS else ()
    if isinstance(key, ec.EllipticCurvePublicKey):
        alg = EC_ALGORITHMS.get(key.curve.name)
        return (alg,) if alg else ()
    return ()


def load_public_key(path: Path) -> PublicKey:
    """An RSA (>= 2048 bits) or EC P-256/P-384 public key from a PEM file (`PUBLIC KEY` or a certificate)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise AuthConfigError(f"ASRAMA_AUTH_PUBLIC_KEY_FILE {path}: cannot read ({exc.strerror})") from None
    try:
        key: object
        if b"-----BEGIN CERTIFICATE-----" in data:
            key = x509.load_pem_x509_certificate(data).public_key()
        else:
            key = load_pem_public_key(data)
    except ValueError:
        raise AuthConfigError(f"ASRAMA_AUTH_PUBLIC_KEY_FILE {path}: not a PEM public key or certificate") from None
    if not algorithms_for(key) or not isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
        raise AuthConfigError(
            f"ASRAMA_AUTH_PUBLIC_KEY_FILE {path}: needs an RSA key of at least {MIN_RSA_BITS} bits "
            "or an EC P-256/P-384 key"
        )
    return key


def signing_keys(jwks: object) -> dict[str, VerifyingKey]:
    """The usable signing keys of a JWK Set by `kid`: public RSA/EC keys for signatures, each with the allowed
    algorithms it fits (narrowed to its `alg` when it declares one). Anything else in the set is skipped."""
    entries = jwks.get("keys") if isinstance(jwks, dict) else None
    if not isinstance(entries, list):
        raise ValueError("not a JWK Set")
    import jwt

    keys: dict[str, VerifyingKey] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kid, declared = entry.get("kid"), entry.get("alg")
        if not isinstance(kid, str) or not kid:
            continue
        try:
            key = jwt.PyJWK(entry).key
        except jwt.PyJWTError:
            continue
        allowed = tuple(a for a in algorithms_for(key) if declared is None or a == declared)
        if allowed and isinstance(key, rsa.RSAPublicKey | ec.EllipticCurvePublicKey):
            keys[kid] = (key, allowed)
    return keys


@runtime_checkable
class KeyLookup(Protocol):
    """Signing keys found by `kid`: the identity provider's JWKS, or the school's own key ring (`--auth sekolah`)."""

    async def key(self, kid: str) -> VerifyingKey | None: ...


class JwksKeys:
    """The identity provider's signing keys from its JWKS URL, cached.

    The set is fetched on first use and again after `ttl` seconds. A `kid` not in the set triggers one refetch
    (key rotation), but at most one such refetch per `cooldown` seconds: a flood of tokens with made-up `kid`s
    costs the identity provider one request per cooldown. A failed fetch keeps the keys already known and is not
    retried for `retry_after` seconds. Fetches run in a worker thread (PyJWKClient is blocking), one at a time;
    while one runs, requests whose key is already known go on with it.
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 300.0,
        cooldown: float = 30.0,
        retry_after: float = 5.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import jwt

        # PyJWKClient fetches and parses (http(s) only, no redirects); the caching policy is ours.
        self._client = jwt.PyJWKClient(url, cache_jwk_set=False, timeout=timeout, headers={"User-Agent": "mcp-asrama"})
        self.url = url
        self.ttl, self.cooldown, self.retry_after = ttl, cooldown, retry_after
        self._clock = clock
        self._keys: dict[str, VerifyingKey] = {}
        self._loaded_at = -math.inf  # last successful fetch
        self._tried_at = -math.inf  # last attempt
        self._refetched_at = -math.inf  # last refetch for an unknown kid
        self._lock = anyio.Lock()
        self.fetches = 0

    async def _fetch(self) -> None:
        import jwt

        self._tried_at = self._clock()
        self.fetches += 1
        try:
            data = await anyio.to_thread.run_sync(self._client.fetch_data)
            self._keys = signing_keys(data)
        except (jwt.PyJWKClientError, OSError, ValueError) as exc:
            log.warning("JWKS fetch failed", extra={"jwks_url": self.url, "error": type(exc).__name__})
            return
        self._loaded_at = self._clock()
        log.info("JWKS loaded", extra={"jwks_url": self.url, "keys": len(self._keys)})

    async def key(self, kid: str) -> VerifyingKey | None:
        """The signing key named `kid`, or None when the identity provider does not publish it."""
        known = self._keys.get(kid)
        if known is not None and (self._clock() - self._loaded_at < self.ttl or self._lock.locked()):
            return known  # fresh; or stale while another request refreshes: a slow IdP stalls only that one
        async with self._lock:
            now = self._clock()
            fetched = False
            if now - self._loaded_at >= self.ttl and now - self._tried_at >= self.retry_after:
                await self._fetch()
                fetched = True
            found = self._keys.get(kid)
            if found is None and now - self._refetched_at >= self.cooldown:
                self._refetched_at = now
                if not fetched:
                    await self._fetch()
                found = self._keys.get(kid)
            return found


def _same_resource(value: object, resource: str) -> bool:
    """Whether an `aud` entry names this resource (as URLs: case of the host and a trailing slash aside)."""
    if not isinstance(value, str):
        return False
    try:
        return str(AnyHttpUrl(value)).removesuffix("/") == resource.removesuffix("/")
    except ValidationError:
        return False


def _scopes(claims: dict[str, Any]) -> list[str]:
    """Scopes from `scope` (space-separated) and `scp` (a list, or a string), without duplicates."""
    found: list[str] = []
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            found.extend(value.split())
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str))
    return list(dict.fromkeys(found))


class JwtVerifier(TokenVerifier):
    """Validates the identity provider's JWT access tokens for this resource (the SDK's `TokenVerifier`)."""

    def __init__(self, *, issuer: str, resource: str, keys: KeyLookup | PublicKey) -> None:
        self.issuer = issuer
        self.resource = resource
        self.keys = keys

    async def _key(self, header: dict[str, Any]) -> VerifyingKey:
        if isinstance(self.keys, KeyLookup):
            kid = header.get("kid")
            if not isinstance(kid, str) or not kid:
                raise Rejected("no kid")
            found = await self.keys.key(kid)
            if found is None:
                raise Rejected("unknown kid")
            return found
        return self.keys, algorithms_for(self.keys)

    async def _claims(self, token: str) -> dict[str, Any]:
        import jwt

        if len(token) > MAX_TOKEN_CHARS:
            raise Rejected("too long")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise Rejected("malformed") from None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            raise Rejected("algorithm not allowed")
        key, allowed = await self._key(header)
        if alg not in allowed:
            raise Rejected("algorithm does not fit the key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise Rejected("expired") from None
        except jwt.ImmatureSignatureError:
            raise Rejected("not yet valid") from None
        except jwt.InvalidIssuerError:
            raise Rejected("wrong issuer") from None
        except jwt.MissingRequiredClaimError as exc:
            raise Rejected(f"missing claim {exc.claim}") from None
        except jwt.InvalidSignatureError:
            raise Rejected("bad signature") from None
        except jwt.PyJWTError as exc:
            raise Rejected(type(exc).__name__) from None
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if not any(_same_resource(a, self.resource) for a in audiences):
            raise Rejected("wrong audience")
        if not isinstance(claims["sub"], str) or not claims["sub"]:
            raise Rejected("bad sub")
        if not isinstance(claims["exp"], int | float):
            raise Rejected("bad exp")
        return claims

    async def check(self, token: str) -> tuple[AccessToken | None, str]:
        """The token's access info when it is valid for this resource, else None and the reason (for the log)."""
        try:
            claims = await self._claims(token)
        except Rejected as reason:
            return None, str(reason)
        except Exception as exc:  # a key or claim shape PyJWT did not foresee: refuse, never a 500
            return None, f"unexpected {type(exc).__name__}"
        client_id = next(
            (claims[c] for c in ("azp", "client_id") if isinstance(claims.get(c), str) and claims[c]), claims["sub"]
        )
        access = AccessToken(
            token=token,
            client_id=client_id,
            scopes=_scopes(claims),
            # The SDK compares expires_at with its clock without leeway; the leeway is ours to grant.
            expires_at=int(claims["exp"]) + LEEWAY,
            resource=self.resource,
            subject=claims["sub"],
            claims=claims,
        )
        return access, ""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info when it is valid for this resource, else None (uncached; see token_cache)."""
        return (await self.check(token))[0]


def _resource(settings: ServerSettings) -> str:
    assert settings.public_url is not None  # ServerSettings requires it with ASRAMA_AUTH=jwt
    return str(settings.public_url)


def token_verifier(settings: ServerSettings) -> CachingVerifier | None:
    """The verifier of bearer tokens (each verified once, see token_cache), or None when ASRAMA_AUTH=none."""
    if settings.auth == "none":
        return None
    assert settings.auth_issuer is not None  # ServerSettings requires it with ASRAMA_AUTH=jwt
    keys: JwksKeys | PublicKey
    if settings.auth_jwks_url is not None:
        keys = JwksKeys(str(settings.auth_jwks_url))
    else:
        assert settings.auth_public_key_file is not None  # ServerSettings requires one of the two
        keys = load_public_key(settings.auth_public_key_file)
    return CachingVerifier(JwtVerifier(issuer=settings.auth_issuer, resource=_resource(settings), keys=keys).check)


def auth_settings(settings: ServerSettings) -> AuthSettings | None:
    """The SDK's resource-server settings (Protected Resource Metadata, required scope), or None."""
    if settings.auth == "none":
        return None
    try:
        return AuthSettings.model_validate(
            {
                "issuer_url": settings.auth_issuer,
                "resource_server_url": _resource(settings),
                "required_scopes": [settings.auth_required_scope],
                "validate_token_resource": True,
            }
        )
    except ValidationError:
        raise AuthConfigError("ASRAMA_AUTH_ISSUER must be the identity provider's http(s) URL") from None
