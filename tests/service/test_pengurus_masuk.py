"""`POST /pengurus/{email}/masuk`, a local account's sign-in: always 200 with the outcome. The right password of an
active account is `ok` (failed attempts cleared, an outdated hash renewed); an unknown email, no password or a wrong
one is `salah`; five wrong ones in a row lock the account (a minute, doubled by each further one, at most an hour),
and while locked even the right one is `terkunci` and not counted; a deactivated account is `nonaktif`. Through the
client too; both dialects."""

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from argon2 import PasswordHasher
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.client import AsramaClient, NotFound
from mcp_asrama.service.crud import pengurus as crud
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.models.pengurus import Pengurus
from tests.conftest import TUTORIAL_KAMAR, insert_rows, serve_db

pytestmark = pytest.mark.anyio
EMAIL = "ridwan@pesantren.sch.id"
SANDI = "  kata sandi Ridwan "  # spaces are part of a password
RIDWAN = {"email": EMAIL, "nama": "Ust. Ridwan", "peran": ["musyrif"], "kamar": ["Al-Fatih 1"]}
SALAH = {"hasil": "salah", "pengurus": None, "coba_lagi_detik": None}


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


@pytest.fixture
async def service(db_url: str, sessions: sessionmaker[Session]) -> AsyncIterator[httpx2.AsyncClient]:
    """The service on the tutorial's rooms, Ridwan a musyrif with a password."""
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=[], absensi=[])
    async for client in serve_db(db_url):
        assert (await client.put(f"/pengurus/{EMAIL}", json=RIDWAN)).status_code == 201
        with sessions() as session, session.begin():
            assert crud.set_sandi(session, EMAIL, SANDI)
        yield client


def row(sessions: sessionmaker[Session], **changes: Any) -> Pengurus:
    """Ridwan's stored row, after setting `changes`."""
    with sessions() as session, session.begin():
        found = session.get(Pengurus, EMAIL)
        assert found is not None
        for name, value in changes.items():
            setattr(found, name, value)
        return found


async def masuk(service: httpx2.AsyncClient, sandi: str, email: str = EMAIL) -> dict[str, Any]:
    response = await service.post(f"/pengurus/{email}/masuk", json={"sandi": sandi})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def test_the_right_password_is_ok_with_the_staff_member_and_clears_failures(
    service: httpx2.AsyncClient, sessions: sessionmaker[Session]
) -> None:
    assert await masuk(service, "salah sandi") == SALAH
    assert await masuk(service, SANDI.strip()) == SALAH  # never trimmed
    assert row(sessions).gagal == 2
    ok = await masuk(service, SANDI, email="RIDWAN@Pesantren.sch.id")
    assert ok["hasil"] == "ok" and ok["coba_lagi_detik"] is None
    assert ok["pengurus"] == {**RIDWAN, "kelas": [], "menulis": False, "aktif": True}
    assert row(sessions).gagal == 0


async def test_unknown_email_and_no_password_are_salah_like_a_wrong_one(
    service: httpx2.AsyncClient, sessions: sessionmaker[Session]
) -> None:
    assert await masuk(service, SANDI, email="siapa@pesantren.sch.id") == SALAH
    assert await masuk(service, SANDI, email="bukan-email") == SALAH
    await service.put("/pengurus/siti@pesantren.sch.id", json={**RIDWAN, "email": "siti@pesantren.sch.id"})
    assert await masuk(service, "apa saja", email="siti@pesantren.sch.id") == SALAH
    for bad in ({"sandi": ""}, {"sandi": "x" * 1025}, {}, {"sandi": "x", "lain": 1}):
        response = await service.post(f"/pengurus/{EMAIL}/masuk", json=bad)
        assert response.status_code == 422, bad
    assert row(sessions).gagal == 0


async def test_five_wrong_passwords_lock_until_the_lock_ends_and_locked_attempts_do_not_count(
    service: httpx2.AsyncClient, sessions: sessionmaker[Session]
) -> None:
    for _ in range(4):
        assert await masuk(service, "tebakan") == SALAH
    assert row(sessions).terkunci_sampai is None
    assert await masuk(service, "tebakan") == SALAH  # the fifth locks
    for sandi in (SANDI, "tebakan"):
        locked = await masuk(service, sandi)
        assert locked["hasil"] == "terkunci" and locked["pengurus"] is None
        assert 55 <= locked["coba_lagi_detik"] <= 60
    assert row(sessions).gagal == 5
    row(sessions, terkunci_sampai=datetime.now(UTC) - timedelta(seconds=1))  # the minute has passed
    assert await masuk(service, "tebakan") == SALAH
    assert 115 <= (await masuk(service, SANDI))["coba_lagi_detik"] <= 120  # the sixth: two minutes
    row(sessions, terkunci_sampai=datetime.now(UTC) - timedelta(seconds=1))
    assert (await masuk(service, SANDI))["hasil"] == "ok"
    stored = row(sessions)
    assert (stored.gagal, stored.terkunci_sampai) == (0, None)


async def test_the_lock_doubles_with_each_further_failure_up_to_an_hour(sessions: sessionmaker[Session]) -> None:
    with sessions() as session, session.begin():
        session.add(Pengurus(email=EMAIL, nama="Ust. Ridwan", peran=["musyrif"], diubah=datetime.now(UTC)))
        crud.set_sandi(session, EMAIL, SANDI)
    now = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
    locks = []
    for _ in range(12):
        with sessions() as session, session.begin():
            assert crud.masuk(session, EMAIL, "tebakan", now).hasil == "salah"
            until = crud._utc(session.get(Pengurus, EMAIL).terkunci_sampai)  # type: ignore[union-attr]
        locks.append(None if until is None else int((until - now).total_seconds()))
        if until is not None:
            with sessions() as session, session.begin():
                just_before = crud.masuk(session, EMAIL, SANDI, until - timedelta(seconds=1))
            assert (just_before.hasil, just_before.coba_lagi_detik) == ("terkunci", 1)
            now = until  # the next attempt comes as the lock ends
    assert locks == [None] * 4 + [60, 120, 240, 480, 960, 1920, 3600, 3600]


async def test_the_right_password_of_a_deactivated_account_is_nonaktif(service: httpx2.AsyncClient) -> None:
    assert (await service.post(f"/pengurus/{EMAIL}/nonaktif")).status_code == 200
    assert await masuk(service, SANDI) == {"hasil": "nonaktif", "pengurus": None, "coba_lagi_detik": None}
    assert await masuk(service, "tebakan") == SALAH


async def test_an_outdated_hash_is_renewed_on_sign_in(
    service: httpx2.AsyncClient, sessions: sessionmaker[Session]
) -> None:
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(SANDI)
    row(sessions, sandi=weak)
    assert (await masuk(service, SANDI))["hasil"] == "ok"
    renewed = row(sessions).sandi
    assert renewed != weak and renewed is not None and not crud.HASHER.check_needs_rehash(renewed)
    assert crud.HASHER.verify(renewed, SANDI)


async def test_the_clients_calls(service: httpx2.AsyncClient) -> None:
    client = AsramaClient(service)
    assert (await client.pengurus("Ridwan@Pesantren.sch.id")).kamar == ["Al-Fatih 1"]
    with pytest.raises(NotFound):
        await client.pengurus("siapa@pesantren.sch.id")
    hasil = await client.pengurus_masuk(EMAIL, SANDI)
    assert hasil.hasil == "ok" and hasil.pengurus is not None and hasil.pengurus.nama == "Ust. Ridwan"
    assert (await client.pengurus_masuk("siapa@pesantren.sch.id", SANDI)).hasil == "salah"
