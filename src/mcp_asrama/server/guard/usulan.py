"""Proposals (`usulan`): a write that waits for a person's decision outside the call that asked for it.

A write tool that cannot ask inside the call (its host shows no form) stores an `Usulan` — a random, unguessable
id (a handle), the caller's subject, the tool and its arguments, the fingerprint of the question shown, the digests
of the secrets that may decide it (the view's `kunci`, the page's secret), and its expiry — and a person decides it
later, on the confirm view or the browser page. A decision is an atomic, single-use claim (`klaim`), let go
(`lepas`) only when the write failed before the service wrote; its outcome (`Putusan`) is kept for `cek_usulan`.

Usulan live where confirmations are claimed (`ASRAMA_CONFIRM_STORAGE`): `MemoryUsulan` in this process, or
`SharedUsulan` in the Redis every replica shares, so that any replica can finish one. In Redis every record is
sealed (AES-256-GCM, the `requestState` key ring: `ASRAMA_STATE_KEYS`), since arguments and results name
children; only the claim marker is plain. Records stay `SIMPAN` (a day) after their expiry, so that `cek_usulan` can
still say `kedaluwarsa`; the memory store holds at most `max_records` and refuses new ones when full (fail closed),
never forgetting one that could still be decided.
"""

import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from mcp.server.request_state import RequestStateCodec

from mcp_asrama.server.guard.limits_storage import MEMORY
from mcp_asrama.server.settings import Saluran

Status = Literal["menunggu", "ditulis", "ditolak", "kedaluwarsa", "berubah"]
SIMPAN = 24 * 3600.0  # seconds an usulan and its outcome are kept after its expiry
_PREFIX = "asrama:usulan:"
_DOMAIN = b"asrama-usulan\x00"  # the sealed payloads' own domain within the requestState key ring


class StoreFull(Exception):
    """The memory store holds `max_records` usulan that may still be decided: no new one is taken."""


def new_secret() -> str:
    """A fresh id or key: 144 random bits, URL-safe."""
    return secrets.token_urlsafe(18)


def digest(secret: str) -> str:
    """What the store keeps of a secret (never the secret itself)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def matches(secret: str, stored: str | None) -> bool:
    """Whether `secret` is the one `stored` is the digest of (in constant time)."""
    return stored is not None and hmac.compare_digest(digest(secret), stored)


@dataclass(frozen=True)
class Usulan:
    """One proposal, as stored."""

    id: str
    subject: str
    tool: str
    arguments: dict[str, Any]
    pertanyaan: str  # the question the person is shown (names children: sealed in Redis)
    fingerprint: str  # its sha256
    saluran: Saluran
    kunci: str | None  # digest of the view's key
    halaman: str | None  # digest of the page's secret
    sampai: float  # expiry, seconds since the epoch

    def kedaluwarsa(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) >= self.sampai


def baru(
    *, subject: str, tool: str, arguments: dict[str, Any], pertanyaan: str, saluran: Saluran, sampai: float
) -> tuple[Usulan, str]:
    """A new usulan asking `pertanyaan` on `saluran`, and the secret that decides it (the view's key or the page's
    secret: the usulan keeps only its digest)."""
    secret = new_secret()
    usulan = Usulan(
        id=new_secret(),
        subject=subject,
        tool=tool,
        arguments=arguments,
        pertanyaan=pertanyaan,
        fingerprint=digest(pertanyaan),
        saluran=saluran,
        kunci=digest(secret) if saluran == "tampilan" else None,
        halaman=digest(secret) if saluran == "halaman" else None,
        sampai=sampai,
    )
    return usulan, secret


@dataclass(frozen=True)
class Putusan:
    """How an usulan ended: `ditulis` (with the write's structured result), `ditolak`, `kedaluwarsa`, or `berubah`
    (with the new question's usulan id), and through which channel."""

    status: Status
    saluran: str | None = None
    hasil: dict[str, Any] | None = None
    pengganti: str | None = None


class UsulanStore(Protocol):
    """Where usulan live; every method may raise when the store is unreachable (callers fail closed)."""

    async def simpan(self, usulan: Usulan) -> None: ...
    async def ambil(self, id_usulan: str) -> Usulan | None: ...
    async def klaim(self, id_usulan: str) -> bool: ...
    async def lepas(self, id_usulan: str) -> None: ...
    async def putus(self, id_usulan: str, putusan: Putusan) -> None: ...
    async def putusan(self, id_usulan: str) -> Putusan | None: ...
    def close(self) -> None: ...


class MemoryUsulan:
    """This process's usulan, forgotten `SIMPAN` after their expiry; at most `max_records`."""

    def __init__(self, *, max_records: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        self.max_records = max_records
        self.clock = clock
        self._usulan: dict[str, Usulan] = {}
        self._putusan: dict[str, Putusan] = {}
        self._klaim: set[str] = set()
        self._lock = threading.Lock()

    def _forget_old(self) -> None:
        old = [i for i, u in self._usulan.items() if u.sampai + SIMPAN <= self.clock()]
        for i in old:
            self._usulan.pop(i, None)
            self._putusan.pop(i, None)
            self._klaim.discard(i)

    async def simpan(self, usulan: Usulan) -> None:
        with self._lock:
            self._forget_old()
            if len(self._usulan) >= self.max_records:
                raise StoreFull
            self._usulan[usulan.id] = usulan

    async def ambil(self, id_usulan: str) -> Usulan | None:
        with self._lock:
            self._forget_old()
            return self._usulan.get(id_usulan)

    async def klaim(self, id_usulan: str) -> bool:
        with self._lock:
            if id_usulan in self._klaim or id_usulan not in self._usulan:
                return False
            self._klaim.add(id_usulan)
            return True

    async def lepas(self, id_usulan: str) -> None:
        with self._lock:
            self._klaim.discard(id_usulan)

    async def putus(self, id_usulan: str, putusan: Putusan) -> None:
        with self._lock:
            self._putusan[id_usulan] = putusan

    async def putusan(self, id_usulan: str) -> Putusan | None:
        with self._lock:
            return self._putusan.get(id_usulan)

    def close(self) -> None:
        """Nothing to let go of."""


class SharedUsulan:
    """Usulan in a Redis every replica reaches (coredis, the `replicas` extra), each record sealed by `codec`."""

    def __init__(self, uri: str, codec: RequestStateCodec) -> None:
        import coredis  # only with the `replicas` extra

        self._pool = coredis.ConnectionPool.from_url(uri)
        self._redis = coredis.Redis(connection_pool=self._pool)
        self._codec = codec

    def _seal(self, value: dict[str, Any]) -> str:
        return self._codec.seal(_DOMAIN + json.dumps(value, separators=(",", ":")).encode())

    def _unseal(self, token: Any) -> dict[str, Any] | None:
        if token is None:
            return None
        text = token.decode() if isinstance(token, bytes) else str(token)
        try:
            payload = self._codec.unseal(text)
        except Exception:  # another key ring, or tampered: as good as absent
            return None
        if not payload.startswith(_DOMAIN):
            return None
        found = json.loads(payload[len(_DOMAIN) :])
        return found if isinstance(found, dict) else None

    @staticmethod
    def _ttl(usulan_sampai: float) -> int:
        return max(1, int(usulan_sampai + SIMPAN - time.time()))

    async def simpan(self, usulan: Usulan) -> None:
        await self._redis.set(_PREFIX + usulan.id, self._seal(asdict(usulan)), ex=self._ttl(usulan.sampai))

    async def ambil(self, id_usulan: str) -> Usulan | None:
        found = self._unseal(await self._redis.get(_PREFIX + id_usulan))
        if found is not None and "sidik" in found:  # stored before the field was named in English (issue 21)
            found["fingerprint"] = found.pop("sidik")
        return Usulan(**found) if found is not None else None

    async def klaim(self, id_usulan: str) -> bool:
        from coredis.tokens import PureToken

        usulan = await self.ambil(id_usulan)
        if usulan is None:
            return False
        key, ttl = _PREFIX + id_usulan + ":klaim", self._ttl(usulan.sampai)
        return bool(await self._redis.set(key, "1", condition=PureToken.NX, ex=ttl))

    async def lepas(self, id_usulan: str) -> None:
        await self._redis.delete([_PREFIX + id_usulan + ":klaim"])

    async def putus(self, id_usulan: str, putusan: Putusan) -> None:
        usulan = await self.ambil(id_usulan)
        ttl = self._ttl(usulan.sampai) if usulan is not None else int(SIMPAN)
        await self._redis.set(_PREFIX + id_usulan + ":putusan", self._seal(asdict(putusan)), ex=ttl)

    async def putusan(self, id_usulan: str) -> Putusan | None:
        found = self._unseal(await self._redis.get(_PREFIX + id_usulan + ":putusan"))
        return Putusan(**found) if found is not None else None

    def close(self) -> None:
        self._pool.disconnect()


def usulan_store(uri: str, codec: RequestStateCodec) -> UsulanStore:
    """The store ASRAMA_CONFIRM_STORAGE names: `memory://` (this process) or a Redis URL (shared)."""
    return MemoryUsulan() if uri == MEMORY else SharedUsulan(uri, codec)
