"""Importing students and rooms from CSV and XLSX: every row checked, all or nothing, upsert by key."""

import re
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.importer import GEDUNG_UNKNOWN, ImportRejected, ImportReport, columns_help, import_file
from mcp_asrama.service.models import Anak, Kamar
from mcp_asrama.service.schemas.anak import AnakIn
from mcp_asrama.service.schemas.kamar import KamarIn
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows

HEADER = "id,nama,kelas,kamar,status,jenis_kelamin,nama_wali,nik,no_hp_wali,alamat,tanggal_lahir"
DEWI = "A010,Dewi Anggraini,9C,Aisyah 2,sakit,P,Ibu Rina,3273014509120004,081299990010,Jl. Anggrek 4,2012-09-05"
EKO = "A011,Eko Prasetyo,10A,Al-Fatih 1,aktif,L,Bapak Tono,3273011203110005,081299990011,Jl. Dahlia 5,2011-03-12"
ROOMS = "nama,gedung,kapasitas,musyrif\nUmar 1,Putra,8,Ust. Salman\nKhadijah 1,Putri,8,Ustz. Maryam\n"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def sessions(db_url: str) -> Iterator[sessionmaker[Session]]:
    """Sessions on an empty database with the schema in place."""
    engine = make_engine(db_url)
    init_schema(engine)
    yield make_sessionmaker(engine)
    engine.dispose()


@pytest.fixture
def school(db_url: str, sessions: sessionmaker[Session]) -> sessionmaker[Session]:
    """Sessions on a database holding the tutorial's school."""
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    return sessions


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def students(sessions: sessionmaker[Session]) -> dict[str, dict[str, Any]]:
    with sessions() as session:
        rows = session.execute(select(Anak.__table__)).mappings()
        return {r["id"]: {k: v for k, v in r.items() if k not in ("no", "kelas_kunci", "kamar_kunci")} for r in rows}


def rooms(sessions: sessionmaker[Session]) -> dict[str, dict[str, Any]]:
    with sessions() as session:
        rows = session.execute(select(Kamar.__table__)).mappings()
        return {r["nama"]: {k: v for k, v in r.items() if k != "kunci"} for r in rows}


def rejected(sessions: sessionmaker[Session], kind: Any, path: Path) -> list[str]:
    """The errors of an import that must fail, checking that it changed nothing."""
    before = students(sessions), rooms(sessions)
    with pytest.raises(ImportRejected) as caught:
        import_file(sessions, kind, path)
    assert (students(sessions), rooms(sessions)) == before
    assert str(caught.value).endswith("nothing was imported")
    return caught.value.errors


# --- reading files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_csv_with_comma_semicolon_or_tab_imports_every_field(
    school: sessionmaker[Session], tmp_path: Path, delimiter: str
) -> None:
    lines = [HEADER, DEWI, EKO]
    text = "\n".join(line.replace(",", delimiter) for line in lines)
    report = import_file(school, "anak", write(tmp_path / "siswa.csv", text))
    assert report == ImportReport(added=2, updated=0)
    stored = students(school)
    assert stored["A010"] == {
        "id": "A010",
        "nama": "Dewi Anggraini",
        "kelas": "9C",
        "kamar": "Aisyah 2",
        "status": "sakit",
        "jenis_kelamin": "P",
        "nama_wali": "Ibu Rina",
        "nik": "3273014509120004",
        "no_hp_wali": "081299990010",
        "alamat": "Jl. Anggrek 4",
        "tanggal_lahir": date(2012, 9, 5),
    }
    assert stored["A011"]["tanggal_lahir"] == date(2011, 3, 12)


def test_semicolon_csv_keeps_commas_inside_values(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    text = "id;nama;kelas;alamat\r\nA020;Fajar Nugroho;7B;Jl. Kenari No. 7, RT 02/RW 03, Sleman\r\n"
    import_file(sessions, "anak", write(tmp_path / "excel-id.csv", text))
    assert students(sessions)["A020"]["alamat"] == "Jl. Kenari No. 7, RT 02/RW 03, Sleman"


def test_quoted_values_may_hold_commas_and_line_breaks(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    text = 'id,nama,kelas,alamat\nA021,"Gita, S.",8A,"Jl. Mawar 1\nBantul"\nA022,Hadi,8A,\n'
    assert import_file(sessions, "anak", write(tmp_path / "s.csv", text)).added == 2
    stored = students(sessions)
    assert stored["A021"]["nama"] == "Gita, S."
    assert stored["A021"]["alamat"] == "Jl. Mawar 1\nBantul"
    assert stored["A022"]["alamat"] is None


def test_utf8_with_bom_header_and_non_ascii_names_are_read(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    text = "\ufeffID,Nama,Kelas\nA030,Siti Nur’aini Zahrá,11B\n"
    import_file(sessions, "anak", write(tmp_path / "bom.csv", text))
    assert students(sessions)["A030"]["nama"] == "Siti Nur’aini Zahrá"


def test_headers_are_matched_without_case_or_surrounding_spaces(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    import_file(sessions, "anak", write(tmp_path / "s.csv", " Id , NAMA ,Kelas\n A031 , Indah  ,12C\n"))
    assert students(sessions)["A031"]["nama"] == "Indah"
    assert students(sessions)["A031"]["status"] == "aktif"


def _xlsx(path: Path, rows: list[list[Any]]) -> Path:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


def test_xlsx_with_text_nik_date_cells_and_numeric_phone(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    path = _xlsx(
        tmp_path / "siswa.xlsx",
        [
            ["id", "nama", "kelas", "nik", "tanggal_lahir", "no_hp_wali", "jenis_kelamin"],
            ["A040", "Joko Susilo", "9A", "3201010101120001", date(2012, 1, 1), 81234567890, "L"],
            ["A041", "Kartika Sari", "9A", "3201014202120002", datetime(2012, 2, 2, 0, 0), "0812-3456-7891", "P"],
            [42, "Lukman Hakim", "9B", None, None, None, None],
        ],
    )
    assert import_file(sessions, "anak", path) == ImportReport(added=3, updated=0)
    stored = students(sessions)
    assert stored["A040"]["nik"] == "3201010101120001"
    assert stored["A040"]["tanggal_lahir"] == date(2012, 1, 1)
    assert stored["A040"]["no_hp_wali"] == "081234567890"
    assert stored["A041"]["tanggal_lahir"] == date(2012, 2, 2)
    assert stored["A041"]["no_hp_wali"] == "0812-3456-7891"
    assert stored["42"]["nik"] is None


def test_xlsx_with_formatted_empty_cells_beyond_the_data_imports(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["nama", "gedung", "kapasitas"])
    sheet.append(["Umar 2", "Putra", 10.0])
    sheet["F9"].number_format = "0"  # Excel reports such a cell as part of the sheet: an empty column and rows
    workbook.save(tmp_path / "kamar.xlsx")
    assert import_file(sessions, "kamar", tmp_path / "kamar.xlsx").added == 1
    assert rooms(sessions)["Umar 2"]["kapasitas"] == 10


def test_xlsx_errors_use_spreadsheet_row_numbers(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    path = _xlsx(
        tmp_path / "s.xlsx", [["id", "nama", "kelas", "nik"], ["A1", "Ok", "7A", None], ["A2", "X", "7A", 123]]
    )
    errors = rejected(sessions, "anak", path)
    assert len(errors) == 1
    assert errors[0].startswith("row 3: nik: 16 digits")


# --- upsert ----------------------------------------------------------------------------------------------


def test_second_import_updates_by_id_and_counts_added_and_updated(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    first = write(tmp_path / "1.csv", "\n".join([HEADER, DEWI, EKO]))
    assert import_file(school, "anak", first) == ImportReport(added=2, updated=0)
    second = write(tmp_path / "2.csv", "id,nama,kelas\nA010,Dewi Anggraini,10C\nA012,Farah,7C\nA001,Ahmad Fauzi,8A\n")
    assert import_file(school, "anak", second) == ImportReport(added=1, updated=2)
    stored = students(school)
    assert set(stored) == {"A001", "A002", "A003", "A010", "A011", "A012"}
    assert stored["A010"]["kelas"] == "10C"
    assert stored["A001"]["kelas"] == "8A"
    assert stored["A011"]["kelas"] == "10A"
    assert import_file(school, "anak", second) == ImportReport(added=0, updated=3)


def test_columns_absent_from_the_file_are_left_unchanged_on_update(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    before = students(school)["A003"]
    import_file(school, "anak", write(tmp_path / "kelas.csv", "id,nama,kelas\nA003,Citra Lestari,8A\n"))
    after = students(school)["A003"]
    assert after == {**before, "kelas": "8A"}
    assert after["status"] == "izin"
    assert after["nik"] == "3171000000000003"


def test_an_empty_cell_in_a_present_column_clears_the_field(school: sessionmaker[Session], tmp_path: Path) -> None:
    import_file(school, "anak", write(tmp_path / "s.csv", "id,nama,kelas,nik,alamat\nA002,Budi Santoso,8B,,\n"))
    stored = students(school)["A002"]
    assert stored["nik"] is None
    assert stored["alamat"] is None
    assert stored["no_hp_wali"] == "081200000002"


def test_renamed_student_is_found_by_the_new_name(school: sessionmaker[Session], tmp_path: Path) -> None:
    import_file(school, "anak", write(tmp_path / "s.csv", "id,nama,kelas\nA001,Ahmad Fauzan Ramadhan,7A\n"))
    with school() as session:
        found = session.scalars(select(Anak.id).where(Anak.nama.contains("Ramadhan"))).all()
    assert found == ["A001"]


def test_import_kamar_adds_then_updates_by_name(school: sessionmaker[Session], tmp_path: Path) -> None:
    assert import_file(school, "kamar", write(tmp_path / "k.csv", ROOMS)) == ImportReport(added=2, updated=0)
    update = "nama;kapasitas;gedung\nUmar 1;10;Putra\nAl-Fatih 1;7;Putra\n"
    assert import_file(school, "kamar", write(tmp_path / "k2.csv", update)) == ImportReport(added=0, updated=2)
    stored = rooms(school)
    assert stored["Umar 1"] == {"nama": "Umar 1", "gedung": "Putra", "kapasitas": 10, "musyrif": "Ust. Salman"}
    assert stored["Al-Fatih 1"]["kapasitas"] == 7
    assert stored["Al-Fatih 1"]["musyrif"] == "Ust. Ridwan"
    assert len(stored) == 4


# --- broken files: every error with its row, nothing imported --------------------------------------------

BROKEN_ANAK = [
    ("bad-nik", f"{HEADER}\n{DEWI}\n{EKO.replace('3273011203110005', '32730112')}", ["row 3: nik: 16 digits"]),
    ("bad-date", f"{HEADER}\n{DEWI.replace('2012-09-05', '05/09/12')}\n{EKO}", ["row 2: tanggal_lahir:"]),
    ("impossible-date", f"{HEADER}\n{DEWI.replace('2012-09-05', '2012-02-30')}", ["row 2: tanggal_lahir:"]),
    ("bad-status", f"{HEADER}\n{DEWI}\n{EKO.replace(',aktif,', ',hadir,')}", ["row 3: status: one of aktif"]),
    ("bad-gender", f"{HEADER}\n{DEWI.replace(',P,', ',W,')}", ["row 2: jenis_kelamin: L or P"]),
    ("bad-id", f"{HEADER}\n{DEWI.replace('A010', 'A 010')}", ["row 2: id: 1-64 letters"]),
    ("bad-phone", f"{HEADER}\n{DEWI.replace('081299990010', 'tidak ada')}", ["row 2: no_hp_wali:"]),
    ("missing-nama", f"{HEADER}\n{DEWI}\n{EKO.replace('Eko Prasetyo', '')}", ["row 3: nama: required"]),
    ("blank-nama", f"{HEADER}\n{DEWI.replace('Dewi Anggraini', '   ')}", ["row 2: nama: required"]),
    ("missing-kelas", "id,nama,kelas\nA1,Ani,\n", ["row 2: kelas: required"]),
    (
        "duplicate-id-in-a-broken-row",
        "id,nama,kelas\nA1,Ani,7A\nA1,,7A\n",
        ["row 3: nama: required", "row 3: id: the same as in row 2"],
    ),
    (
        "duplicate-id",
        f"{HEADER}\n{DEWI}\n{EKO}\n{DEWI}\n{DEWI}",
        ["row 4: id: the same as in row 2", "row 5: id: the same as in row 2"],
    ),
    (
        "misspelt-column",
        "id,nama,klas\nA1,Ani,7A\n",
        ["row 1: column 3: not a column of 'anak'", "row 1: required column 'kelas' is missing"],
    ),
    ("twice-column", "id,nama,kelas,nama\nA1,Ani,7A,Ani\n", ["row 1: column 'nama' appears twice"]),
    ("missing-column", "id,nama,kamar\nA1,Ani,Aisyah 2\n", ["row 1: required column 'kelas' is missing"]),
    ("extra-value", "id,nama,kelas\nA1,Ani,7A\nA2,Budi,7A,Bogor\n", ["row 3: a value in column 4"]),
    ("too-long", f"id,nama,kelas\nA1,{'N' * 201},7A\n", ["row 2: nama:"]),
    ("empty-file", "", ["the file is empty"]),
    ("blank-lines-only", "\n\n  \n", ["the file is empty"]),
    ("header-only", f"{HEADER}\n", ["the file has a header but no data rows"]),
    ("header-and-blank-rows", f"{HEADER}\n,,,,,,,,,,\n\n", ["the file has a header but no data rows"]),
]


@pytest.mark.parametrize(("content", "expected"), [c[1:] for c in BROKEN_ANAK], ids=[c[0] for c in BROKEN_ANAK])
def test_broken_anak_file_is_rejected_with_row_numbers_and_nothing_imported(
    school: sessionmaker[Session], tmp_path: Path, content: str, expected: list[str]
) -> None:
    errors = rejected(school, "anak", write(tmp_path / "siswa.csv", content))
    assert len(errors) == len(expected), errors
    for error, start in zip(errors, expected, strict=True):
        assert error.startswith(start), errors


def test_every_error_of_a_file_is_listed_in_row_order(school: sessionmaker[Session], tmp_path: Path) -> None:
    content = "\n".join(
        [
            HEADER,
            DEWI,  # row 2: fine, must not be imported
            "",  # row 3: blank, skipped but counted
            EKO.replace("3273011203110005", "123").replace(",L,", ",X,"),  # row 4: two errors
            "A013,Gilang,7A,,pulang,L,,,,,2013-13-01",  # row 5
            "A001,Ahmad Fauzi,9A,,,,,,,,",  # row 6: an update, fine
        ]
    )
    errors = rejected(school, "anak", write(tmp_path / "s.csv", content))
    assert [e.split(":")[0] for e in errors] == ["row 4", "row 4", "row 5"]
    assert {e.split(":")[1].strip() for e in errors} == {"jenis_kelamin", "nik", "tanggal_lahir"}
    assert "X" not in " ".join(errors), "no value is repeated in an error"
    assert "123" not in " ".join(errors), "personal data (a NIK) is never repeated in an error"


def test_non_utf8_file_is_rejected(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = write(tmp_path / "ansi.csv", "id,nama,kelas\nA1,José Müller,7A\n", encoding="cp1252")
    assert rejected(school, "anak", path) == ["the file is not UTF-8 text: save it as 'CSV UTF-8' and try again"]


def test_binary_file_is_rejected(school: sessionmaker[Session], tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"id,nama,kelas\x00\x00\nA1,Ani,7A\n")
    assert "not a CSV text file" in rejected(school, "anak", path)[0]


def test_missing_file_is_rejected(school: sessionmaker[Session], tmp_path: Path) -> None:
    assert rejected(school, "anak", tmp_path / "tidak-ada.csv")[0].startswith("cannot read")


@pytest.mark.parametrize("name", ["rusak.xlsx", "lama.xls"])
def test_file_that_is_not_an_xlsx_workbook_is_rejected(
    school: sessionmaker[Session], tmp_path: Path, name: str
) -> None:
    path = write(tmp_path / name, "id,nama,kelas\nA1,Ani,7A\n")
    errors = rejected(school, "anak", path)
    assert len(errors) == 1
    assert "xlsx" in errors[0].lower()


def test_empty_xlsx_is_rejected(school: sessionmaker[Session], tmp_path: Path) -> None:
    assert rejected(school, "anak", _xlsx(tmp_path / "kosong.xlsx", [])) == [
        "the file is empty: the first row must name the columns"
    ]


BROKEN_KAMAR = [
    ("bad-capacity", f"{ROOMS}Umar 3,Putra,enam,\n", ["row 4: kapasitas: a whole number"]),
    ("negative-capacity", f"{ROOMS}Umar 3,Putra,-1,\n", ["row 4: kapasitas: a whole number"]),
    ("missing-gedung", "nama,gedung,kapasitas\nUmar 3,,6\n", ["row 2: gedung: required"]),
    ("missing-column", "nama,kapasitas\nUmar 3,6\n", ["row 1: required column 'gedung' is missing"]),
    ("duplicate-name", f"{ROOMS}Umar 1,Putra,9,\n", ["row 4: nama: the same as in row 2"]),
    ("too-long-gedung", f"nama,gedung,kapasitas\nUmar 3,{'G' * 150},6\n", ["row 2: gedung: at most 100"]),
    (
        "student-columns",
        "id,nama,kelas\nA1,Ani,7A\n",
        ["row 1: column 1: not a column", "row 1: column 3: not a column"],
    ),
]


@pytest.mark.parametrize(("content", "expected"), [c[1:] for c in BROKEN_KAMAR], ids=[c[0] for c in BROKEN_KAMAR])
def test_broken_kamar_file_is_rejected_with_row_numbers_and_nothing_imported(
    school: sessionmaker[Session], tmp_path: Path, content: str, expected: list[str]
) -> None:
    errors = rejected(school, "kamar", write(tmp_path / "kamar.csv", content))
    assert len(errors) >= len(expected), errors
    for start in expected:
        assert any(e.startswith(start) for e in errors), errors


# --- rooms: a student's kamar must exist, unless the import creates it -------------------------------------


def test_student_in_a_room_that_does_not_exist_is_refused_with_its_row_and_nothing_imported(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    content = f"{HEADER}\n{DEWI}\n{EKO.replace('Al-Fatih 1', 'Umar 9')}\nA012,Farah,7C,umar 9,,P,,,,,\n"
    errors = rejected(school, "anak", write(tmp_path / "siswa.csv", content))
    assert [e.split(": kamar: ")[0] for e in errors] == ["row 3", "row 4"]
    assert errors[0] == ("row 3: kamar: no such room (import the rooms first with 'import kamar', or add --buat-kamar)")
    assert "3273011203110005" not in " ".join(errors), "personal data is never repeated in an error"


def test_a_room_is_found_whatever_the_case_and_an_empty_kamar_needs_no_room(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    content = "id,nama,kelas,kamar\nA012,Farah,7C,AISYAH 2\nA013,Gilang,7C,\n"
    assert import_file(school, "anak", write(tmp_path / "s.csv", content)) == ImportReport(added=2, updated=0)
    assert (students(school)["A012"]["kamar"], students(school)["A013"]["kamar"]) == ("AISYAH 2", None)
    assert len(rooms(school)) == 2


def test_rooms_imported_first_let_students_name_them(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    import_file(sessions, "kamar", write(tmp_path / "kamar.csv", ROOMS))
    content = "id,nama,kelas,kamar\nA012,Farah,7C,Khadijah 1\nA013,Gilang,7C,Umar 1\n"
    assert import_file(sessions, "anak", write(tmp_path / "s.csv", content)).added == 2


def test_create_rooms_makes_the_missing_ones_with_building_from_jenis_kelamin_and_beds_for_their_students(
    school: sessionmaker[Session], tmp_path: Path
) -> None:
    content = "\n".join(
        [
            "id,nama,kelas,kamar,jenis_kelamin",
            "A020,Hadi,7A,Umar 9,L",
            "A021,Irfan,7A,umar 9,L",  # the same new room, spelled in another case
            "A022,Jihan,7B,Khadijah 9,P",
            "A023,Kiki,7B,Serbaguna,L",
            "A024,Lala,7B,Serbaguna,P",  # boys and girls: the building is left to the school
            "A025,Mira,7C,Tamu 1,",  # no jenis_kelamin: the same
            "A026,Nanda,7C,Al-Fatih 1,L",  # a room that exists is left as it is
        ]
    )
    before = rooms(school)
    report = import_file(school, "anak", write(tmp_path / "s.csv", content), create_rooms=True)
    assert report == ImportReport(added=7, updated=0, rooms_created=("Umar 9", "Khadijah 9", "Serbaguna", "Tamu 1"))
    stored = rooms(school)
    assert {name: stored[name] for name in before} == before
    assert stored["Umar 9"] == {"nama": "Umar 9", "gedung": "Putra", "kapasitas": 2, "musyrif": None}
    assert (stored["Khadijah 9"]["gedung"], stored["Khadijah 9"]["kapasitas"]) == ("Putri", 1)
    assert stored["Serbaguna"]["gedung"] == stored["Tamu 1"]["gedung"] == GEDUNG_UNKNOWN
    assert students(school)["A021"]["kamar"] == "umar 9"


def test_create_rooms_creates_nothing_when_any_row_is_refused(school: sessionmaker[Session], tmp_path: Path) -> None:
    content = "id,nama,kelas,kamar\nA020,Hadi,7A,Umar 9\nA021,,7A,Umar 9\n"
    before = rooms(school)
    with pytest.raises(ImportRejected) as caught:
        import_file(school, "anak", write(tmp_path / "s.csv", content), create_rooms=True)
    assert caught.value.errors == ["row 3: nama: required"]
    assert rooms(school) == before
    assert "A020" not in students(school)


# --- the column list and the shipped examples --------------------------------------------------------------


@pytest.mark.parametrize(("kind", "model"), [("anak", AnakIn), ("kamar", KamarIn)])
def test_column_list_names_every_column_the_importer_accepts_required_or_optional(kind: str, model: Any) -> None:
    text = columns_help()
    section = text.split(f"columns of 'import {kind}'")[1].split("columns of")[0]
    listed = {line.split()[0]: line for line in section.splitlines()[1:] if line.startswith("  ")}
    assert list(listed) == list(model.model_fields)
    for name, info in model.model_fields.items():
        assert ("required" if info.is_required() else "optional") in listed[name].split()[:3], listed[name]
    personal = [name for name, line in listed.items() if line[16] == "*"]
    assert personal == (["nik", "no_hp_wali", "alamat", "tanggal_lahir"] if kind == "anak" else [])


def test_column_list_gives_the_formats_of_dates_sexes_and_statuses() -> None:
    text = columns_help()
    assert "YYYY-MM-DD" in text
    assert "L or P" in text
    assert "one of aktif, izin, sakit, pulang (default aktif)" in text
    assert "DD/MM/YYYY" in text and "laki-laki" in text
    assert "ignored with one warning; --ketat refuses them" in text


def test_the_shipped_examples_import_cleanly_rooms_then_students(
    sessions: sessionmaker[Session],
) -> None:
    assert import_file(sessions, "kamar", EXAMPLES / "kamar.csv") == ImportReport(added=4, updated=0)
    assert import_file(sessions, "anak", EXAMPLES / "siswa.csv") == ImportReport(added=6, updated=0)
    stored = students(sessions)
    assert {a["kamar"] for a in stored.values()} - {None} <= set(rooms(sessions))
    assert {a["jenis_kelamin"] for a in stored.values()} == {"L", "P"}


def test_the_shipped_examples_hold_no_real_looking_nik_or_phone() -> None:
    content = (EXAMPLES / "siswa.csv").read_text(encoding="utf-8")
    niks = re.findall(r"\b\d{16}\b", content)
    assert niks, "the example shows the NIK column filled in"
    assert all(re.fullmatch(r"990{12}\d\d", n) for n in niks), "no province has code 99: obviously fictional"
    assert all(p.startswith("08120000") for p in re.findall(r"\b08\d{8,11}\b", content))
