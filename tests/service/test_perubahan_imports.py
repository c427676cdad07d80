"""The change feed's events of the writes outside the routes: an import is one event per kind with null keys (all
or nothing, like its rows), the demo school one per kind plus its running izin's."""

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.contract import FEED_KINDS
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.demo import seed_demo
from mcp_asrama.service.importer import ImportRejected, import_file
from mcp_asrama.service.models import Perubahan
from tests.conftest import TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows

TODAY = date.today().isoformat()


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=[])
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def events(sessions: sessionmaker[Session]) -> list[tuple[Any, ...]]:
    with sessions() as session:
        rows = session.execute(
            select(Perubahan.id, Perubahan.jenis, Perubahan.tanggal, Perubahan.id_anak, Perubahan.kamar).order_by(
                Perubahan.id
            )
        )
        return [tuple(r) for r in rows]


def csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_each_import_is_one_event_of_its_kind_with_null_keys(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    files: list[tuple[Any, str]] = [
        ("kamar", "nama,gedung,kapasitas\nAl-Fatih 3,Putra,8\n"),
        ("anak", "id,nama,kelas,kamar\nS1,Rizki Ramadhan,7B,Al-Fatih 3\n"),
        ("anak", "id,nama,kelas\nS2,Dewi Lestari,7B\n"),  # nobody placed: rooms unchanged
        ("jenis_pelanggaran", "kode,nama,kategori,poin\nbolos_sholat,Tidak sholat berjamaah,sedang,20\n"),
        ("pelanggaran", f"id_anak,tanggal,jenis\nA001,{TODAY},bolos_sholat\n"),
        ("hafalan", f"id_anak,tanggal,jenis,surah,ayat_mulai,ayat_selesai\nA002,{TODAY},ziyadah,78,1,5\n"),
        ("kesehatan", f"id_anak,tanggal,keluhan,kategori\nA003,{TODAY},Pusing,lainnya\n"),
    ]
    for n, (kind, text) in enumerate(files):
        import_file(sessions, kind, csv(tmp_path / f"{n}.csv", text))
    kinds = ["kamar", "anak", "kamar", "anak", "pelanggaran", "pelanggaran", "hafalan", "kesehatan"]
    assert events(sessions) == [(n, k, None, None, None) for n, k in enumerate(kinds, start=1)]


def test_an_import_with_rooms_created_also_says_kamar(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    import_file(
        sessions, "anak", csv(tmp_path / "a.csv", "id,nama,kelas,kamar\nS1,Rizki,7B,Baru 1\n"), create_rooms=True
    )
    assert [e[1] for e in events(sessions)] == ["anak", "kamar"]


def test_a_rejected_import_records_nothing(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    with pytest.raises(ImportRejected):
        import_file(sessions, "pelanggaran", csv(tmp_path / "p.csv", f"id_anak,tanggal,jenis\nA999,{TODAY},bolos\n"))
    with pytest.raises(ImportRejected):
        import_file(sessions, "anak", csv(tmp_path / "a.csv", "id,nama,kelas,kamar\nS1,Rizki,7B,Tidak Ada\n"))
    assert events(sessions) == []


def test_the_demo_school_records_every_kind_once_and_its_running_izin(db_url: str) -> None:
    engine = make_engine(db_url)
    init_schema(engine)
    sessions = make_sessionmaker(engine)
    try:
        assert seed_demo(sessions, date.today(), students=30, days=5)
        found = events(sessions)
    finally:
        engine.dispose()
    bulk = [e[1] for e in found if e[2:] == (None, None, None)]
    assert sorted(bulk) == sorted(FEED_KINDS)  # every kind of the contract, whatever domains it holds
    assert {"absensi", "izin", "anak", "kamar", "pelanggaran", "hafalan", "kesehatan"} <= set(bulk)
    keyed = {e[1] for e in found if e[3] is not None}
    assert keyed <= {"absensi", "izin", "anak"} and "izin" in keyed
    assert [e[0] for e in found] == list(range(1, len(found) + 1))
