"""Importing kinds of violation, violations, hafalan deposits and clinic visits from CSV and XLSX: every row checked
against the student, the kind, the date and the surah; all or nothing; each broken row named by number and column."""

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from openpyxl import Workbook
from pydantic import BaseModel, Field
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama import cli
from mcp_asrama.contract import DOMAINS, IMPORT_KINDS
from mcp_asrama.service import import_pesantren, importer
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.importer import ImportRejected, columns_help, import_file
from mcp_asrama.service.models import Hafalan, JenisPelanggaran, KunjunganKlinik, Pelanggaran, table_class
from mcp_asrama.service.schemas.hafalan import HafalanIn
from mcp_asrama.service.schemas.kesehatan import KunjunganIn
from mcp_asrama.service.schemas.pelanggaran import JenisPelanggaranIn, PelanggaranIn
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows

YESTERDAY = (date.today() - timedelta(days=1)).isoformat()
TOMORROW = (date.today() + timedelta(days=1)).isoformat()
TABLES = (JenisPelanggaran, Pelanggaran, Hafalan, KunjunganKlinik)


@pytest.fixture
def school(db_url: str) -> Iterator[sessionmaker[Session]]:
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def stored(sessions: sessionmaker[Session], table: Any) -> list[dict[str, Any]]:
    with sessions() as session:
        return [dict(r) for r in session.execute(select(table.__table__)).mappings()]


def everything(sessions: sessionmaker[Session]) -> list[list[dict[str, Any]]]:
    return [sorted(stored(sessions, t), key=str) for t in TABLES]


def rejected(sessions: sessionmaker[Session], kind: Any, path: Path) -> list[str]:
    before = everything(sessions)
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, kind, path)
    assert everything(sessions) == before
    return caught.value.errors


def test_jenis_pelanggaran_adds_new_kinds_and_updates_by_kode(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(
        tmp_path / "jenis.csv",
        "kode;nama;kategori;poin\nmembawa_hp;Membawa HP;berat;40\nmakan_di_kamar;Makan di kamar;ringan;3\n",
    )
    report = import_file(school, "jenis_pelanggaran", path)
    assert (report.added, report.updated) == (1, 1)
    kinds = {r["kode"]: r for r in stored(school, JenisPelanggaran)}
    assert kinds["membawa_hp"] == {"kode": "membawa_hp", "nama": "Membawa HP", "kategori": "berat", "poin": 40}
    assert kinds["makan_di_kamar"]["poin"] == 3 and "merokok" in kinds


def test_broken_jenis_rows_are_named_by_row_and_column(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(
        tmp_path / "jenis.csv",
        "kode,nama,kategori,poin\nMembawa HP,x,ringan,5\nok_1,Baik,parah,5\nok_2,Baik,ringan,2000\nok_1,Dua,ringan,1\n",
    )
    assert rejected(school, "jenis_pelanggaran", path) == [
        "row 2: kode: 1-40 lower-case letters, digits, '_' or '-', e.g. membawa_hp",
        "row 3: kategori: one of ringan, sedang, berat",
        "row 4: poin: a whole number from 0 to 1000",
        "row 5: kode: the same as in row 3",
    ]


def test_pelanggaran_rows_become_records_with_the_kinds_defaults(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(
        tmp_path / "pelanggaran.csv",
        "id_anak,tanggal,jenis,poin,keterangan\n"
        f"A001,{YESTERDAY},membawa_hp,,Disita musyrif\nA002,2026-10-01,terlambat_sholat,8,\n",
    )
    report = import_file(school, "pelanggaran", path)
    assert (report.added, report.updated) == (2, 0)
    rows = sorted(stored(school, Pelanggaran), key=lambda r: r["id_anak"])
    assert [(r["id_anak"], r["jenis"], r["kategori"], r["poin"], r["keterangan"]) for r in rows] == [
        ("A001", "membawa_hp", "sedang", 25, "Disita musyrif"),
        ("A002", "terlambat_sholat", "ringan", 8, None),
    ]
    assert {r["dicatat_oleh"] for r in rows} == {"import"} and all(len(r["id"]) == 16 for r in rows)
    again = import_file(school, "pelanggaran", path)
    assert again.added == 2 and len(stored(school, Pelanggaran)) == 4


def test_broken_pelanggaran_rows_name_student_kind_date_and_never_echo_the_note(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    path = write(
        tmp_path / "pelanggaran.csv",
        "id_anak,tanggal,jenis,kategori,keterangan\n"
        f"A999,{YESTERDAY},membawa_hp,,\n"
        f"A001,{YESTERDAY},terbang,,\n"
        f"A001,{TOMORROW},merokok,,\n"
        f"A001,{YESTERDAY},merokok,parah,\n"
        f"A001,{YESTERDAY},merokok,,{'rahasia ' * 70}\n"
        f"A001,{YESTERDAY},merokok,,\n",
    )
    errors = rejected(school, "pelanggaran", path)
    assert errors == [
        "row 2: id_anak: no such student (import anak first)",
        "row 3: jenis: no such kind of violation (see 'import jenis_pelanggaran')",
        "row 4: tanggal: after today",
        "row 5: kategori: one of ringan, sedang, berat",
        "row 6: keterangan: String should have at most 500 characters",
    ]
    assert not any("rahasia" in e for e in errors)


def test_hafalan_from_xlsx_with_number_cells(school: sessionmaker[Session], tmp_path: Path) -> None:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["id_anak", "tanggal", "jenis", "surah", "ayat_mulai", "ayat_selesai", "nilai", "penguji"])
    sheet.append(["A001", date.today() - timedelta(days=2), "ziyadah", 78, 1, 40, 90, "Ust. Ridwan"])
    sheet.append(["A003", date.today(), "murajaah", 114, 1, 6, None, None])
    book.save(tmp_path / "hafalan.xlsx")
    assert import_file(school, "hafalan", tmp_path / "hafalan.xlsx").added == 2
    rows = sorted(stored(school, Hafalan), key=lambda r: r["id_anak"])
    assert [(r["surah"], r["ayat_mulai"], r["ayat_selesai"], r["nilai"], r["jenis"]) for r in rows] == [
        (78, 1, 40, 90, "ziyadah"),
        (114, 1, 6, None, "murajaah"),
    ]


def test_broken_hafalan_rows_say_which_surah_is_shorter(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(
        tmp_path / "hafalan.csv",
        "id_anak,tanggal,jenis,surah,ayat_mulai,ayat_selesai\n"
        f"A001,{YESTERDAY},ziyadah,2,280,290\n"
        f"A001,{YESTERDAY},tilawah,1,1,7\n"
        f"A001,{YESTERDAY},ziyadah,115,1,2\n"
        f"A001,{YESTERDAY},ziyadah,78,10,5\n"
        f"A001,{YESTERDAY},ziyadah,78,1,40\n"
        f"A001,{YESTERDAY},ziyadah,Al-Bakoroh,1,5\n",
    )
    assert rejected(school, "hafalan", path) == [
        "row 2: ayat_selesai: Al-Baqarah hanya punya 286 ayat",
        "row 3: jenis: ziyadah (new) or murajaah (review)",
        "row 4: surah: the surah's number (1-114) or name (e.g. Al-Baqarah)",
        "row 5: ayat_selesai: Ayat mulai (10) melewati ayat selesai (5)",
        "row 7: surah: the surah's number (1-114) or name (e.g. Al-Baqarah)",
    ]


def test_hafalan_may_name_its_surah_in_any_common_spelling(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(
        tmp_path / "hafalan.csv",
        "id_anak,tanggal,jenis,surah,ayat_mulai,ayat_selesai\n"
        f"A001,{YESTERDAY},ziyadah,al baqarah,1,5\n"
        f"A001,{YESTERDAY},ziyadah,Yaasiin,1,12\n"
        f"A001,{YESTERDAY},ziyadah,36,13,20\n",
    )
    assert import_file(school, "hafalan", path).added == 3
    assert sorted((r["surah"], r["ayat_mulai"]) for r in stored(school, Hafalan)) == [(2, 1), (36, 1), (36, 13)]


def test_kesehatan_imports_and_broken_rows_never_echo_health_data(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    good = write(
        tmp_path / "klinik.csv",
        f"id_anak,tanggal,keluhan,kategori,obat\nA002,{YESTERDAY},Demam tinggi,demam,Parasetamol\n",
    )
    assert import_file(school, "kesehatan", good).added == 1
    [row] = stored(school, KunjunganKlinik)
    assert (row["keluhan"], row["kategori"], row["obat"], row["tindakan"]) == (
        "Demam tinggi",
        "demam",
        "Parasetamol",
        None,
    )
    broken = write(
        tmp_path / "klinik2.csv",
        "id_anak,tanggal,keluhan,kategori,tindakan\n"
        f"A001,{YESTERDAY},Gatal,flu,\n"
        f"A001,{YESTERDAY},,demam,\n"
        f"A001,{YESTERDAY},Batuk,batuk-pilek,{'Diagnosa rahasia ' * 40}\n",
    )
    errors = rejected(school, "kesehatan", broken)
    assert [e.split(":")[0] + ":" + e.split(":")[1] for e in errors] == [
        "row 2: kategori",
        "row 3: keluhan",
        "row 4: tindakan",
    ]
    assert "demam, batuk-pilek, pencernaan, cedera, kulit, lainnya" in errors[0]
    assert not any("rahasia" in e or "Gatal" in e or "flu" in e for e in errors), "no value is repeated"


@pytest.mark.parametrize(
    ("kind", "model"),
    [
        ("jenis_pelanggaran", JenisPelanggaranIn),
        ("pelanggaran", PelanggaranIn),
        ("hafalan", HafalanIn),
        ("kesehatan", KunjunganIn),
    ],
)
def test_column_list_names_every_column_of_the_new_kinds(kind: str, model: Any) -> None:
    section = columns_help().split(f"columns of 'import {kind}'")[1].split("columns of")[0]
    listed = {line.split()[0]: line for line in section.splitlines()[1:] if line.startswith("  ")}
    assert list(listed) == list(model.model_fields)
    health = [name for name, line in listed.items() if line[16] == "+"]
    assert health == (["keluhan", "tindakan", "obat", "rujukan"] if kind == "kesehatan" else [])


def test_cli_imports_a_new_kind_and_exits_1_on_a_broken_file(
    db_url: str, school: sessionmaker[Session], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "p.csv", f"id_anak,tanggal,jenis\nA001,{YESTERDAY},bolos\n")
    assert cli.main(["import", "pelanggaran", str(good), "--buat", "--db", db_url]) == 0
    assert "1 added, 0 updated (pelanggaran)" in capsys.readouterr().out
    broken = write(tmp_path / "q.csv", f"id_anak,tanggal,jenis\nA001,{TOMORROW},bolos\n")
    assert cli.main(["import", "pelanggaran", str(broken), "--buat", "--db", db_url]) == 1
    assert "row 2: tanggal: after today" in capsys.readouterr().err
    assert len(stored(school, Pelanggaran)) == 1


# --- what a dated domain's import kind derives from its declaration ------------------------------------------------


def test_a_dated_domain_imports_its_body_into_the_table_named_like_it() -> None:
    derived = {
        d.name: (d.body, table_class(d.name), None)
        for d in DOMAINS
        if d.dated and d.body is not None and d.name in d.imports and table_class(d.name) is not None
    }
    assert derived["pelanggaran"] == (PelanggaranIn, Pelanggaran, None)
    assert derived["hafalan"] == (HafalanIn, Hafalan, None)
    assert {k: import_pesantren.TARGETS[k] for k in derived} == derived
    assert import_pesantren.TARGETS["kesehatan"] == (KunjunganIn, KunjunganKlinik, None)  # table kunjungan_klinik
    assert import_pesantren.TARGETS["jenis_pelanggaran"][2] == "kode"
    assert list(importer._TARGETS) == list(IMPORT_KINDS)


class Baris(BaseModel):
    """A row of a kind declared only by its body."""

    id_anak: Annotated[str, Field(description="the student's id")]
    tingkat: Annotated[Literal["rendah", "tinggi"], Field(description="how high")]
    warna: Annotated[Literal["merah", "biru"] | None, Field(description="its colour")] = None
    catatan: str | None = None


def test_a_column_no_one_described_is_meant_and_hinted_as_its_body_declares() -> None:
    assert import_pesantren.choices(Baris, "tingkat") == "one of rendah, tinggi"
    assert import_pesantren.choices(Baris, "warna") == "one of merah, biru"
    assert import_pesantren.choices(Baris, "catatan") is None
    assert import_pesantren.choices(Baris, "row") is None
    assert import_pesantren.choices(PelanggaranIn, "kategori") == "one of ringan, sedang, berat"
    assert importer.meaning("baris", Baris, "tingkat") == "how high"
    assert importer.meaning("baris", Baris, "catatan") == "catatan"
    assert importer.meaning("pelanggaran", PelanggaranIn, "jenis") == "the kind of violation"  # said here first


def test_import_help_names_every_kind_and_lists_each_ones_columns_with_a_meaning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["import", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for kind, (model, _, _) in importer._TARGETS.items():
        assert f"{kind}:" in out or f"{kind}," in out, kind
        section = columns_help().split(f"columns of 'import {kind}'")[1].split("columns of")[0]
        lines = [line.split(maxsplit=2) for line in section.splitlines()[1:] if line.startswith("  ")]
        assert [line[0] for line in lines] == list(model.model_fields)
        assert all(len(line) == 3 and line[2].strip() for line in lines), kind
    new = [kind for kind, (_, _, key) in importer._TARGETS.items() if key is None]
    assert f"{', '.join(new)}: every row is a new record" in columns_help()
