"""The shared usulan store (Redis, sealed) across an upgrade: what an older release stored is still read."""

import json
import time

import pytest
from mcp.server.request_state import AESGCMRequestStateCodec

from mcp_asrama.server.guard.usulan import _DOMAIN, _PREFIX, SharedUsulan, baru
from tests.auth.conftest import needs_redis

KEY = "kunci-rahasia-sekolah-yang-panjang-0001"


@needs_redis
@pytest.mark.anyio
async def test_an_usulan_stored_under_the_old_field_name_is_read_with_its_fingerprint(redis_url: str) -> None:
    codec = AESGCMRequestStateCodec([KEY])
    store = SharedUsulan(redis_url, codec)
    try:
        usulan, _ = baru(
            subject="ust-ridwan",
            tool="catat_absensi",
            arguments={"tanggal": "2026-11-02"},
            pertanyaan="Catat absensi?",
            saluran="tampilan",
            sampai=time.time() + 600,
        )
        await store.simpan(usulan)
        assert await store.ambil(usulan.id) == usulan
        old = {("sidik" if k == "fingerprint" else k): v for k, v in usulan.__dict__.items()}  # an older release
        sealed = codec.seal(_DOMAIN + json.dumps(old).encode())
        await store._redis.set(_PREFIX + usulan.id, sealed, ex=600)
        assert await store.ambil(usulan.id) == usulan
    finally:
        store.close()
