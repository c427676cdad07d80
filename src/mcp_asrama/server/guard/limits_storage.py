"""A `limits` async storage opened from a URL, shared by the rate limits and the confirmation claims.

`memory://` is this process's own; `redis://host:6379/0` (`rediss://` with TLS) is a Redis every replica reaches,
through coredis (the `replicas` extra). The storage owns its connection pool, so that `close` lets go of it at the
end of the server's lifespan.
"""

from typing import Any

from limits.aio.storage import MemoryStorage, Storage
from limits.storage import storage_from_string

MEMORY = "memory://"


class LimitsStorage:
    """The storage `uri` names, and the connections it holds."""

    def __init__(self, uri: str) -> None:
        self.shared = uri != MEMORY
        self._pool: Any = None
        if not self.shared:
            self.storage: Storage = MemoryStorage()
            return
        import coredis  # only with the `replicas` extra

        self._pool = coredis.ConnectionPool.from_url(uri)
        # `limits` passes the pool on to coredis; its annotation knows only scalar options.
        self.storage = storage_from_string(f"async+{uri}", connection_pool=self._pool)  # type: ignore[assignment]

    def close(self) -> None:
        """Let go of the pool's connections (nothing to do in memory)."""
        if self._pool is not None:
            self._pool.disconnect()
