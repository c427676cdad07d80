"""An import file is read within bounds: a hostile file (a zip bomb, billion laughs, an external entity, too many
rows, columns or bytes) is refused in one line with memory bounded and nothing imported, and no error ever repeats
a value of the file (a child's name, a clinic category). Real files built in a temporary folder; the bombs are
imported by the real command in a process whose address space is capped."""

import random
import resource
import struct
import subprocess
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import openpyxl.xml.functions
import pytest
from openpyxl import Workbook
from sqlalchemy import create_engine, text

from mcp_asrama import cli
from mcp_asrama.service import xlsx_guard
from mcp_asrama.service.import_files import (
    MAX_FILE_BYTES,
    MAX_LINE_CHARS,
    FileRefused,
    read_table,
)
from mcp_asrama.service.xlsx_guard import MAX_COLUMNS, MAX_ROWS
from tests.e2e.conftest import EXECUTABLE, clean_env

NS = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
HEAD = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet ' + NS + b"><sheetData>"
TAIL = b"</sheetData></worksheet>"
ADDRESS_SPACE = 600 * 2**20  # the importing process's whole address space, interpreter and libraries included


def inline(ref: str, value: str) -> bytes:
    return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'.encode()


def sheet_rows(rows: list[list[str]]) -> bytes:
    cells = (
        f'<row r="{r}">'.encode() + b"".join(inline(f"{chr(65 + c)}{r}", v) for c, v in enumerate(row)) + b"</row>"
        for r, row in enumerate(rows, start=1)
    )
    return b"".join(cells)


def workbook(path: Path, sheet: Iterable[bytes], *, level: int = 9) -> Path:
    """A workbook saved by openpyxl whose first sheet's XML is `sheet` (written chunk by chunk)."""
    base = path.with_name("base-" + path.name)
    Workbook().save(base)
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as out:
        for info in source.infolist():
            if info.filename == "xl/worksheets/sheet1.xml":
                with out.open(info.filename, "w", force_zip64=True) as part:
                    for chunk in sheet:
                        part.write(chunk)
            else:
                out.writestr(info.filename, source.read(info))
    base.unlink()
    return path


def repeated(head: bytes, unit: bytes, times: int, tail: bytes) -> Iterator[bytes]:
    yield head
    block = unit * 10_000
    for _ in range(times // 10_000):
        yield block
    yield tail


def import_in_small_process(kind: str, path: Path, db: Path) -> subprocess.CompletedProcess[str]:
    """`mcp-asrama import` in a process that cannot map more than ADDRESS_SPACE."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run(  # the cap is set in the child, before it runs
        [EXECUTABLE, "import", kind, str(path), "--buat", "--db", str(db)],
        env=clean_env(XDG_DATA_HOME=str(db.parent)),
        preexec_fn=cap,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def stored_students(db: Path) -> int:
    engine = create_engine(f"sqlite:///{db}")
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM anak")).scalar_one())
    finally:
        engine.dispose()


def refused(path: Path) -> str:
    with pytest.raises(FileRefused) as caught:
        read_table(path)
    assert caught.value.errors == [caught.value.reason]
    return caught.value.reason


# --- workbooks ----------------------------------------------------------------------------------------------


def test_a_workbook_built_like_the_bombs_but_honest_is_read(tmp_path: Path) -> None:
    rows = [["id", "nama", "kelas"], ["A1", "Ani", "7A"]]
    path = workbook(tmp_path / "jujur.xlsx", [HEAD, sheet_rows(rows), TAIL])
    assert read_table(path) == rows


ZIP_BOMB_UNIT = b"<c><v>1</v></c>"  # one row of ever more cells: openpyxl builds the whole row before it yields it


@pytest.mark.e2e
def test_zip_bomb_is_refused_in_one_line_within_a_capped_address_space(tmp_path: Path) -> None:
    """~ 300 MB of one row's cells packed into well under 1 MB (the review's bomb took 1.2 GB and ended in
    MemoryError): refused from the zip's directory, before a byte is unpacked."""
    bomb = workbook(tmp_path / "bom.xlsx", repeated(HEAD + b'<row r="1">', ZIP_BOMB_UNIT, 20_000_000, b"</row>" + TAIL))
    assert bomb.stat().st_size < 2**20
    db = tmp_path / "asrama.db"
    done = import_in_small_process("anak", bomb, db)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"{bomb}: the workbook unpacks to more than 256 MB: split it or save it as CSV; nothing was imported into {db}"
    ]
    assert done.stdout == ""
    assert stored_students(db) == 0


def test_bomb_of_high_ratio_under_the_unpacked_limit_is_refused(tmp_path: Path) -> None:
    bomb = workbook(
        tmp_path / "rasio.xlsx", repeated(HEAD + b'<row r="1">', ZIP_BOMB_UNIT, 3_000_000, b"</row>" + TAIL)
    )
    assert refused(bomb) == "the workbook has a part that unpacks to more than 100 times its packed size"


def test_workbook_that_claims_a_small_unpacked_size_is_read_no_further_than_it_claims(tmp_path: Path) -> None:
    """The bounds trust the sizes the zip's directory states: a part that claims 100 KB but holds 45 MB is read
    only to 100 KB (zipfile stops there) and then fails its checksum."""
    path = workbook(tmp_path / "bohong.xlsx", repeated(HEAD + b'<row r="1">', ZIP_BOMB_UNIT, 3_000_000, b"</row>"))
    name = b"xl/worksheets/sheet1.xml"
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        local = archive.getinfo(name.decode()).header_offset
    entry = data.find(b"PK\x01\x02")  # the central directory's entries, until the part's
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.find(b"PK\x01\x02", entry + 4)
    struct.pack_into("<I", data, local + 22, 100_000)
    struct.pack_into("<I", data, entry + 24, 100_000)
    path.write_bytes(bytes(data))
    assert refused(path) == "not an XLSX workbook: save it again as .xlsx or CSV"


@pytest.mark.e2e
def test_row_of_many_cells_that_packs_plainly_is_refused_within_a_capped_address_space(tmp_path: Path) -> None:
    """A row of 6 million cells with varied values: it packs like real data (under 100 to 1) and unpacks to ~100 MB;
    openpyxl would hold all of it as one row (gigabytes). Refused at the first cell after column 64."""
    numbers = random.Random(19)

    def cells() -> Iterator[bytes]:
        yield HEAD + b'<row r="1">'
        for _ in range(600):
            yield b"".join(b"<c><v>%d</v></c>" % numbers.randrange(10**6) for _ in range(10_000))
        yield b"</row>" + TAIL

    bomb = workbook(tmp_path / "baris.xlsx", cells(), level=1)
    db = tmp_path / "asrama.db"
    done = import_in_small_process("anak", bomb, db)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"{bomb}: row 1: more than {MAX_COLUMNS} columns: delete the columns after the last one; nothing was "
        f"imported into {db}"
    ]


def test_sheet_of_too_many_rows_is_refused(tmp_path: Path) -> None:
    numbers = random.Random(7)
    rows = (b'<row r="%d"><c r="A%d"><v>%d</v></c></row>' % (r, r, numbers.randrange(10**9)) for r in range(1, 200_003))
    path = workbook(tmp_path / "baris.xlsx", [HEAD, b"".join(rows), TAIL])
    assert refused(path) == f"more than {MAX_ROWS:,} data rows: split the file"


def test_row_numbered_far_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    """openpyxl fills the rows between with empty ones: a row numbered 1,048,576 would be a million rows."""
    path = workbook(tmp_path / "jauh.xlsx", [HEAD, sheet_rows([["id", "nama", "kelas"]]), b'<row r="1048576"/>', TAIL])
    assert refused(path) == f"more than {MAX_ROWS:,} data rows: split the file"


BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE worksheet [\n<!ENTITY a0 "tawa tawa tawa tawa tawa tawa tawa tawa">\n'
    + b"".join(b'<!ENTITY a%d "%s">\n' % (i, b"&a%d;" % (i - 1) * 10) for i in range(1, 10))
    + b"]>\n<worksheet "
    + NS
    + b'><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&a9;</t></is></c></row></sheetData></worksheet>'
)


@pytest.mark.e2e
def test_billion_laughs_is_refused_in_one_line(tmp_path: Path) -> None:
    bomb = workbook(tmp_path / "tawa.xlsx", [BILLION_LAUGHS])
    db = tmp_path / "asrama.db"
    done = import_in_small_process("anak", bomb, db)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"{bomb}: the workbook's XML declares a document type (entities), which no workbook needs: refused; "
        f"nothing was imported into {db}"
    ]


def test_external_entity_is_refused_and_the_file_it_names_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "rahasia.txt"
    secret.write_text("RAHASIA-XXE-19", encoding="utf-8")
    sheet = (
        b'<?xml version="1.0"?>\n<!DOCTYPE worksheet [<!ENTITY x SYSTEM "file://%s">]>\n<worksheet %s><sheetData>'
        b'<row r="1"><c r="A1" t="inlineStr"><is><t>id</t></is></c><c r="B1" t="inlineStr"><is><t>nama</t></is></c>'
        b'<c r="C1" t="inlineStr"><is><t>kelas</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>A1</t></is>'
        b'</c><c r="B2" t="inlineStr"><is><t>&x;</t></is></c><c r="C2" t="inlineStr"><is><t>7A</t></is></c></row>'
        b"</sheetData></worksheet>" % (str(secret).encode(), NS)
    )
    path = workbook(tmp_path / "xxe.xlsx", [sheet])
    db = tmp_path / "asrama.db"
    done = cli.main(["import", "anak", str(path), "--buat", "--db", str(db)])
    assert done == 1
    assert refused(path).startswith("the workbook's XML declares a document type")
    assert stored_students(db) == 0


def test_entities_in_any_part_are_refused_not_only_in_the_sheet(tmp_path: Path) -> None:
    path = workbook(tmp_path / "bagian.xlsx", [HEAD, sheet_rows([["id", "nama", "kelas"], ["A1", "Ani", "7A"]]), TAIL])
    with zipfile.ZipFile(path) as source:
        parts = {info.filename: source.read(info) for info in source.infolist()}
    parts["xl/styles.xml"] = BILLION_LAUGHS.replace(b"worksheet", b"styleSheet")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name, content in parts.items():
            out.writestr(name, content)
    assert "declares a document type" in refused(path)


def test_workbook_of_too_many_parts_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bagian.xlsx"
    with zipfile.ZipFile(path, "w") as out:
        for number in range(xlsx_guard.MAX_PARTS + 1):
            out.writestr(f"xl/media/{number}.bin", b"")
    assert refused(path) == f"the workbook has more than {xlsx_guard.MAX_PARTS:,} parts"


def test_openpyxl_itself_parses_through_defusedxml() -> None:
    """The second wall: every XML openpyxl reads goes through defusedxml (a dependency)."""
    assert openpyxl.xml.functions.fromstring.__module__.startswith("defusedxml")
    assert openpyxl.xml.functions.iterparse.__module__.startswith("defusedxml")


def test_ordinary_workbook_of_100000_students_is_within_every_bound(tmp_path: Path) -> None:
    """Every column of 100,000 students, in inline strings as openpyxl writes them (larger than Excel's shared
    strings): about 70 MB unpacked, packed some 12 to 1."""
    header = [
        "id",
        "nama",
        "kelas",
        "kamar",
        "status",
        "jenis_kelamin",
        "nama_wali",
        "nik",
        "no_hp_wali",
        "alamat",
        "tanggal_lahir",
    ]
    rows = [
        f"S{i:06d}|Santri {i}|7A|Kamar {i % 300}|aktif|L|Wali {i}|{3273010000000000 + i}|0812{i:08d}|"
        f"Jl. Merdeka No. {i}, Sleman|2010-01-01".split("|")
        for i in range(100_000)
    ]
    path = workbook(tmp_path / "sekolah.xlsx", [HEAD, sheet_rows([header, *rows]), TAIL], level=6)
    xlsx_guard.check_workbook(path)  # raises Refused when a bound is passed


# --- CSV ----------------------------------------------------------------------------------------------------


def test_csv_of_the_row_limit_is_read_and_one_row_more_is_refused(tmp_path: Path) -> None:
    lines = ["id,nama,kelas"] + [f"S{i:06d},Santri {i},7A" for i in range(MAX_ROWS)]
    path = tmp_path / "batas.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(read_table(path)) == MAX_ROWS + 1
    path.write_text("\n".join([*lines, "S9999999,Satu Lagi,7A"]) + "\n", encoding="utf-8")
    assert refused(path) == f"more than {MAX_ROWS:,} data rows: split the file"


def test_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "besar.csv"
    with path.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)
    assert (
        refused(path) == f"{(MAX_FILE_BYTES + 1) / 2**20:.1f} MB, more than the 40 MB an import reads: split the file"
    )
    assert refused(path.rename(tmp_path / "besar.xlsx")).endswith("MB an import reads: split the file")


def test_csv_line_longer_than_any_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "panjang.csv"
    path.write_text("id,nama,kelas\nA1,Ani,7A\n" + "," * MAX_LINE_CHARS + "\n", encoding="utf-8")
    assert refused(path) == f"line 3 is longer than {MAX_LINE_CHARS:,} characters: not a table of records"


def test_csv_value_after_the_column_limit_is_refused_and_empty_columns_after_the_last_are_not(tmp_path: Path) -> None:
    path = tmp_path / "lebar.csv"
    path.write_text("id,nama,kelas" + "," * 200 + "\nA1,Ani,7A" + "," * 200 + "\n", encoding="utf-8")
    assert read_table(path) == [["id", "nama", "kelas"], ["A1", "Ani", "7A"]]
    path.write_text("id,nama,kelas\nA1,Ani,7A" + "," * MAX_COLUMNS + "x\n", encoding="utf-8")
    assert refused(path) == f"row 2: more than {MAX_COLUMNS} columns: delete the columns after the last one"


# --- no value is ever repeated ------------------------------------------------------------------------------


@pytest.mark.e2e
def test_import_errors_never_repeat_a_name_or_a_clinic_category(tmp_path: Path) -> None:
    """A child's name in a broken row, a file without its header (the first child's name where a column name
    should be), a clinic visit of a category that does not exist: the command's whole output names rows and
    columns, never what they hold."""
    db = tmp_path / "asrama.db"
    name, category, student = "Zulaikha Rahmawati", "tifus-rahasia", "RHS-0419"
    files = [
        ("anak", f"id,nama,kelas,jenis_kelamin\nA1,{name * 12},7A,X\n", ["row 2: nama:", "row 2: jenis_kelamin:"]),
        ("anak", f"A1,{name},7A\n", ["row 1: column 2: not a column of 'anak'"]),
        (
            "kesehatan",
            f"id_anak,tanggal,keluhan,kategori\nA1,2020-01-01,Pusing sekali,{category}\n"
            f"{student},2020-01-01,Pusing berat,kulit\n",
            ["row 2: kategori: one of", "row 3: id_anak: no such student"],
        ),
    ]
    for number, (kind, content, expected) in enumerate(files):
        path = tmp_path / f"berkas{number}.csv"
        path.write_text(content, encoding="utf-8")
        done = subprocess.run(
            [EXECUTABLE, "import", kind, str(path), "--buat", "--db", str(db)],
            env=clean_env(XDG_DATA_HOME=str(tmp_path)),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1
        output = done.stdout + done.stderr
        for line in expected:
            assert line in output, output
        for value in ("Zulaikha", "Rahmawati", "tifus", student, "Pusing"):
            assert value.lower() not in output.lower(), output
