"""Reading an import file within bounds: a CSV (`,`, `;` or tab, UTF-8) or the first sheet of an XLSX workbook
becomes rows of text cells (a number cell's a `Number`), header first, or the file is refused in one line
(`FileRefused`) with memory bounded whatever it holds.

The bounds: the file's size on disk, its data rows (a 100,000-student school fits twice), its columns and cells,
the length of a line of a CSV; and for a workbook, before openpyxl opens it, how far its parts unpack (in all and
against their packed size) and what its XML holds (`xlsx_guard`). openpyxl itself parses through defusedxml.
"""

import csv
import io
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException

from mcp_asrama.service import xlsx_guard
from mcp_asrama.service.xlsx_guard import MAX_CELLS, MAX_COLUMNS, MAX_ROWS, Refused

MAX_FILE_BYTES = 40 * 2**20  # a CSV of 200,000 students with every column is about 35 MB; an XLSX much less
MAX_LINE_CHARS = 65_536  # of one line of a CSV: a row of every column at its longest is a few thousand
_DELIMITERS = (",", ";", "\t")
# What a damaged or odd workbook makes zipfile and openpyxl raise (RuntimeError: an encrypted part; ValueError
# includes defusedxml's refusals and openpyxl's own).
_BROKEN = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    InvalidFileException,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    ParseError,
    RuntimeError,
)
Table = list[list[str | None]]


class Number(str):
    """The text of a cell that a workbook holds as a number (Excel keeps 15 significant digits of one)."""


class ImportRejected(Exception):
    """The file was not imported; `errors` says why, one line each (rows numbered as in a spreadsheet)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(f"{len(errors)} error(s); nothing was imported")
        self.errors = errors


class FileRefused(ImportRejected):
    """The file as a whole cannot be read (too large, not a workbook, hostile XML): one reason, no row."""

    def __init__(self, reason: str) -> None:
        super().__init__([reason])
        self.reason = reason


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return Number(int(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Number(value)
    text = str(value).strip()
    return text or None


def _collect(rows: Iterable[Iterable[Any]]) -> Table:
    """The rows as text cells without their empty tail, refused past MAX_ROWS data rows, MAX_COLUMNS columns or
    MAX_CELLS cells (so what is kept stays bounded)."""
    table: Table = []
    cells = 0
    for number, values in enumerate(rows, start=1):
        if number > MAX_ROWS + 1:
            raise FileRefused(f"more than {MAX_ROWS:,} data rows: split the file")
        row = [_cell(v) for v in values]
        while row and row[-1] is None:
            row.pop()
        if len(row) > MAX_COLUMNS:
            raise FileRefused(f"row {number}: more than {MAX_COLUMNS} columns: delete the columns after the last one")
        cells += len(row)
        if cells > MAX_CELLS:
            raise FileRefused(f"more than {MAX_CELLS:,} cells: split the file")
        table.append(row)
    return table


def _read_xlsx(path: Path) -> Table:
    not_xlsx = "not an XLSX workbook: save it again as .xlsx or CSV"
    try:
        xlsx_guard.check_workbook(path)
        workbook = load_workbook(path, read_only=True, data_only=True)
    except Refused as refused:
        raise FileRefused(str(refused)) from None
    except _BROKEN as exc:
        raise FileRefused(not_xlsx) from exc
    try:
        sheet = workbook.worksheets[0]
        sheet.reset_dimensions()  # each row as long as its own cells, not as the sheet claims to be
        return _collect(sheet.iter_rows(values_only=True))
    except _BROKEN as exc:
        raise FileRefused(not_xlsx) from exc
    finally:
        workbook.close()


def _lines(content: str) -> Iterator[str]:
    for number, line in enumerate(io.StringIO(content, newline=""), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise FileRefused(f"line {number} is longer than {MAX_LINE_CHARS:,} characters: not a table of records")
        yield line


def _read_csv(path: Path) -> Table:
    try:
        content = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRefused("the file is not UTF-8 text: save it as 'CSV UTF-8' and try again") from exc
    if "\x00" in content:
        raise FileRefused("the file is not a CSV text file: save it as 'CSV UTF-8' or .xlsx")
    delimiter = max(_DELIMITERS, key=content.partition("\n")[0].count)  # column names never hold one
    reader = csv.reader(_lines(content), delimiter=delimiter)
    try:
        return _collect(reader)
    except csv.Error as exc:  # its messages name what is wrong, never a value
        raise ImportRejected([f"row {reader.line_num}: {exc}"]) from exc


def read_table(path: Path) -> Table:
    """The rows of a CSV (`,`, `;` or tab, UTF-8) or of the first sheet of an XLSX file, header first, each
    without its empty tail; FileRefused when the file cannot be read within bounds."""
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise FileRefused("old Excel files (.xls) are not read: save it as .xlsx or CSV")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FileRefused(
                f"{size / 2**20:.1f} MB, more than the {MAX_FILE_BYTES // 2**20} MB an import reads: split the file"
            )
        return _read_xlsx(path) if suffix in {".xlsx", ".xlsm"} else _read_csv(path)
    except OSError as exc:
        raise FileRefused(f"cannot read it: {exc.strerror or type(exc).__name__}") from exc
