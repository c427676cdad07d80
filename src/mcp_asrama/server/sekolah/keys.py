"""The keys that sign our access tokens: one ES256 key per period (a week by default), shared by every replica.

The key of a period is created by whichever replica first needs it (`SharedState.add`: the first one stored wins,
so all replicas sign with the same key) and kept three periods. Tokens are signed with the current period's key;
the JWKS publishes the previous, current and next periods' keys, so a token signed just before a rotation still
verifies, and a verifier that cached the JWKS already knows the next key. A key's `kid` names its period.
The private keys live in the data service's database: whoever holds the service token can read every child's
record anyway, so they add no new power.
"""

import secrets
import time
from collections.abc import Callable
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from mcp_asrama.server.guard.auth import VerifyingKey
from mcp_asrama.server.sekolah.store import SharedState

KIND = "kunci"
ALGORITHM = "ES256"


def _new_key(period: int) -> dict[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return {"kid": f"p{period}-{secrets.token_hex(4)}", "pem": pem.decode()}


class KeyRing:
    """This server's signing keys by period, loaded from the shared state and kept in memory."""

    def __init__(self, state: SharedState, *, period: float = 7 * 86400, clock: Callable[[], float] = time.time):
        self.state = state
        self.period = period
        self.clock = clock
        self._keys: dict[int, tuple[str, ec.EllipticCurvePrivateKey]] = {}

    def _now(self) -> int:
        return int(self.clock() // self.period)

    async def _load(self, period: int) -> tuple[str, ec.EllipticCurvePrivateKey]:
        known = self._keys.get(period)
        if known is None:
            stored = await self.state.add(KIND, f"p{period}", _new_key(period), ttl=3 * self.period)
            private = serialization.load_pem_private_key(stored["pem"].encode(), password=None)
            assert isinstance(private, ec.EllipticCurvePrivateKey)
            known = self._keys[period] = (stored["kid"], private)
            for old in [p for p in self._keys if p < period - 2]:
                del self._keys[old]
        return known

    async def sign(self, claims: dict[str, Any]) -> str:
        """`claims` as an RFC 9068 access token (`typ: at+jwt`) signed with the current key."""
        kid, private = await self._load(self._now())
        return jwt.encode(claims, private, algorithm=ALGORITHM, headers={"kid": kid, "typ": "at+jwt"})

    async def key(self, kid: str) -> VerifyingKey | None:
        """The public key named `kid` when it is one of the published periods' (the verifier's key lookup)."""
        period = kid.partition("-")[0].removeprefix("p")
        if not period.isdigit() or abs(int(period) - self._now()) > 1:
            return None
        found, private = await self._load(int(period))
        return (private.public_key(), (ALGORITHM,)) if secrets.compare_digest(found, kid) else None

    async def jwks(self) -> dict[str, list[dict[str, Any]]]:
        """The public JWK Set (`jwks_uri`): the previous, current and next periods' keys."""
        keys = []
        for period in (self._now() - 1, self._now(), self._now() + 1):
            kid, private = await self._load(period)
            public = jwt.algorithms.ECAlgorithm.to_jwk(private.public_key(), as_dict=True)
            keys.append({**public, "kid": kid, "alg": ALGORITHM, "use": "sig"})
        return {"keys": keys}
