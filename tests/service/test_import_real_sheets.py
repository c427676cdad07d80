"""Importing spreadsheets as schools keep them: extra columns (`No`, `NIS`) ignored with one warning or refused when
strict, `Aktif`, `laki-laki`, `dd/mm/yyyy`, real date cells; a NIK held as a number of 16 digits refused without
repeating it; every error of every row and every unknown room found in one pass, nothing stored."""

from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama import cli
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.import_files import ImportRejected
from mcp_asrama.service.importer import import_file
from mcp_asrama.service.models import JenisPelanggaran, Pelanggaran
from mcp_asrama.service.schemas.anak import AnakIn
from tests.service.test_importer import _xlsx, rooms, students, write

HEADER = ["No", "ID", "Nama", "Kelas", "Kamar", "Status", "Jenis Kelamin", "NIK", "Tanggal Lahir", "NIS"]
ROOMS = "nama,gedung,kapasitas\nUmar 1,Putra,8\nKhadijah 1,Putri,8\n"
NIK_AS_NUMBER = 3273014509120004


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on an empty database with the schema in place."""
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


def sheet(tmp_path: Path, *rows: list[Any]) -> Path:
    return _xlsx(tmp_path / "siswa.xlsx", [HEADER, *rows])


def with_rooms(sessions: sessionmaker[Session], tmp_path: Path) -> sessionmaker[Session]:
    import_file(sessions, "kamar", write(tmp_path / "kamar.csv", ROOMS))
    return sessions


def test_a_real_sheet_imports_with_one_warning_naming_the_ignored_columns(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    path = sheet(
        tmp_path,
        [1, "A1", "Ahmad Fauzi", "7A", "umar 1", "Aktif", "L", "3273010101120001", "12/04/2013", "1001"],
        [2, "A2", "Siti Aminah", "7A", "Khadijah 1", "AKTIF", "Perempuan", "3273014101120002", "5-1-2013", "1002"],
        [3, "A3", "Budi Santoso", "7B", "Umar 1", "izin", "laki-laki", None, date(2012, 11, 30), "1003"],
        [4, "A4", "Dewi Lestari", "7B", None, "Sakit", "wanita", None, "2012-02-29", None],
        [5, "A5", "Eko Saputra", "7B", None, None, "Laki Laki", None, None, None],
    )
    warnings: list[str] = []
    report = import_file(with_rooms(sessions, tmp_path), "anak", path, warn=warnings.append)
    assert (report.added, report.updated) == (5, 0)
    assert warnings == ["warning: ignoring the columns that are not of 'anak': No, NIS (--ketat refuses such a file)"]
    stored = students(sessions)
    assert [stored[i]["status"] for i in ("A1", "A2", "A3", "A4", "A5")] == ["aktif", "aktif", "izin", "sakit", "aktif"]
    assert [stored[i]["jenis_kelamin"] for i in ("A1", "A2", "A3", "A4", "A5")] == ["L", "P", "L", "P", "L"]
    assert stored["A1"]["tanggal_lahir"] == date(2013, 4, 12)  # dd/mm/yyyy, never mm/dd
    assert stored["A2"]["tanggal_lahir"] == date(2013, 1, 5)
    assert stored["A3"]["tanggal_lahir"] == date(2012, 11, 30)  # a date cell
    assert stored["A4"]["tanggal_lahir"] == date(2012, 2, 29)
    assert stored["A1"]["nik"] == "3273010101120001"
    assert "NIS" not in stored["A1"] and "1001" not in stored["A1"].values()


def test_every_error_of_every_row_and_every_missing_room_in_one_pass_nothing_stored(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    path = sheet(
        tmp_path,
        [1, "A1", "Ahmad Fauzi", "7A", "Umar 1", "Aktif", "L", "3273010101120001", "12/04/2013", "1001"],
        [2, "A2", "Siti Aminah", "7A", "Khadijah 1", "Aktif", "P", NIK_AS_NUMBER, "05/01/2013", "1002"],
        [3, "A3", "Budi Santoso", None, "Umar 9", "hadir", "L", None, "31/02/2013", "1003"],
        [4, "A4", "Dewi Lestari", "7B", "Aisyah 3", "Aktif", "W", None, None, None],
        [5, "A5", "Eko Saputra", "7B", "Ruang Tamu", "Aktif", "L", None, None, None],
    )
    sessions = with_rooms(sessions, tmp_path)
    before = students(sessions), rooms(sessions)
    warnings: list[str] = []
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, "anak", path, warn=warnings.append)
    assert (students(sessions), rooms(sessions)) == before == ({}, before[1])
    no_such_room = "kamar: no such room (import the rooms first with 'import kamar', or add --buat-kamar)"
    assert caught.value.errors == [
        "row 3: nik: a number of more than 15 digits, which a spreadsheet cannot hold exactly (its last digits may "
        "have changed): format the column nik as text and type the numbers again",
        "row 4: kelas: required",
        "row 4: status: one of aktif, izin, sakit, pulang",
        "row 4: tanggal_lahir: a valid date YYYY-MM-DD (or DD/MM/YYYY, DD-MM-YYYY)",
        f"row 4: {no_such_room}",
        "row 5: jenis_kelamin: L or P (also laki-laki, perempuan)",
        f"row 5: {no_such_room}",
        f"row 6: {no_such_room}",
    ]
    assert len(warnings) == 1
    everything = "\n".join(caught.value.errors + warnings)
    for value in (str(NIK_AS_NUMBER), str(NIK_AS_NUMBER)[:15], "Umar 9", "Aisyah", "Ruang", "Budi", "hadir"):
        assert value not in everything


def test_a_nik_or_phone_number_of_15_digits_or_less_is_not_refused_for_its_length(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    path = _xlsx(
        tmp_path / "s.xlsx",
        [["id", "nama", "kelas", "nik", "no_hp_wali"], ["A1", "Ani", "7A", 327301450912000, 6281234567890123]],
    )
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, "anak", path)
    phone, nik = caught.value.errors
    assert phone.startswith("row 2: no_hp_wali: a number of more than 15 digits")
    assert nik == "row 2: nik: 16 digits"  # too short, not imprecise


def test_strict_refuses_the_extra_columns_by_number_and_warns_of_nothing(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    path = sheet(tmp_path, [1, "A1", "Ahmad Fauzi", "7A", None, "Aktif", "L", None, None, "1001"])
    warnings: list[str] = []
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, "anak", path, strict=True, warn=warnings.append)
    assert [e[: e.index("(")] for e in caught.value.errors] == [
        "row 1: column 1: not a column of 'anak' ",
        "row 1: column 10: not a column of 'anak' ",
    ]
    assert warnings == []
    assert students(sessions) == {}


def test_an_extra_column_is_named_by_number_when_its_header_could_be_personal_data(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    content = "id,nama,kelas,3273014509120004,ibu.rina@contoh.id,Catatan\nA1,Ani,7A,x,y,z\n"
    warnings: list[str] = []
    import_file(sessions, "anak", write(tmp_path / "s.csv", content), warn=warnings.append)
    assert warnings == [
        "warning: ignoring the columns that are not of 'anak': column 4, column 5, Catatan "
        "(--ketat refuses such a file)"
    ]


def test_a_misspelt_required_column_is_an_error_with_the_unknown_ones_by_number(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    warnings: list[str] = []
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, "anak", write(tmp_path / "s.csv", "No,ID,Nama,Klas\n1,A1,Ani,7A\n"), warn=warnings.append)
    assert [e.split(" (")[0] for e in caught.value.errors] == [
        "row 1: column 1: not a column of 'anak'",
        "row 1: column 4: not a column of 'anak'",
        "row 1: required column 'kelas' is missing",
    ]
    assert warnings == []


def test_records_take_choices_in_any_case_and_day_first_dates(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    kinds = "Kode,Nama,Kategori,Poin,Keterangan\nbolos_kelas,Bolos kelas,BERAT,50,catatan guru\n"
    assert import_file(sessions, "jenis_pelanggaran", write(tmp_path / "j.csv", kinds)).added == 1
    import_file(sessions, "anak", write(tmp_path / "s.csv", "id,nama,kelas\nA1,Ani,7A\n"))
    records = "No,ID Anak,Tanggal,Jenis,Kategori\n1,A1,03/02/2024,bolos_kelas,Sedang\n"
    assert import_file(sessions, "pelanggaran", write(tmp_path / "p.csv", records)).added == 1
    with sessions() as session:
        kind = session.get(JenisPelanggaran, "bolos_kelas")
        stored = session.execute(select(Pelanggaran.tanggal, Pelanggaran.kategori, Pelanggaran.poin)).one()
    assert kind is not None and kind.kategori == "berat"
    assert tuple(stored) == (date(2024, 2, 3), "sedang", 50)


def test_the_command_warns_in_one_line_and_refuses_with_ketat(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sheet(tmp_path, [1, "A1", "Ahmad Fauzi", "7A", None, "Aktif", "laki-laki", None, "12/04/2013", "1001"])
    assert cli.main(["import", "anak", str(path), "--db", db_url, "--buat", "--ketat"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[:2] == [
        "row 1: column 1: not a column of 'anak' (allowed: " + ", ".join(AnakIn.model_fields) + ")",
        "row 1: column 10: not a column of 'anak' (allowed: " + ", ".join(AnakIn.model_fields) + ")",
    ]
    assert "nothing was imported" in err and "warning" not in err
    assert cli.main(["import", "anak", str(path), "--db", db_url, "--buat"]) == 0
    out, err = capsys.readouterr()
    assert err == "warning: ignoring the columns that are not of 'anak': No, NIS (--ketat refuses such a file)\n"
    assert out.startswith(f"{path}: 1 added, 0 updated (anak)")  # nothing stored by the refused import
