"""Import students or rooms from CSV or XLSX: every row validated, all or nothing, upsert by key.

Rows are numbered as a spreadsheet shows them (the header is row 1). Columns the file does not have are left
as they are on students and rooms that already exist; an empty cell clears its field.
"""

import csv
import io
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from openpyxl import load_workbook
from openpyxl.utils.exceptions import InvalidFileException
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.service import crud
from mcp_asrama.service.models import Anak, Kamar
from mcp_asrama.service.schemas import AnakIn, KamarIn

Kind = Literal["anak", "kamar"]
_TARGETS: dict[Kind, tuple[type[BaseModel], Any, str]] = {
    "anak": (AnakIn, Anak, "id"),
    "kamar": (KamarIn, Kamar, "nama"),
}
_HINTS = {
    "id": "1-64 letters, digits, '-', '_' or '.'",
    "nik": "16 digits",
    "no_hp_wali": "a phone number such as 081234567890",
    "tanggal_lahir": "a valid date YYYY-MM-DD",
    "status": "one of aktif, izin, sakit, pulang",
    "jenis_kelamin": "L or P",
    "kapasitas": "a whole number from 0 to 1000",
}
_DELIMITERS = (",", ";", "\t")


PERSONAL_FIELDS = frozenset({"nik", "no_hp_wali", "alamat", "tanggal_lahir"})


class ImportRejected(Exception):
    """The file was not imported; `errors` says why, one line each (rows numbered as in a spreadsheet)."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(f"{len(errors)} error(s); nothing was imported")
        self.errors = errors


@dataclass(frozen=True)
class ImportReport:
    """What an import did."""

    added: int
    updated: int


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    return text or None


def _read_xlsx(path: Path) -> list[list[str | None]]:
    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError) as exc:
        raise ImportRejected([f"{path.name} is not an XLSX workbook: save it again as .xlsx or CSV"]) from exc
    try:
        return [[_cell(v) for v in row] for row in workbook.worksheets[0].iter_rows(values_only=True)]
    finally:
        workbook.close()


def _delimiter(header_line: str) -> str:
    """The separator of a CSV file, from its header (column names never contain one): `,`, `;` or tab."""
    return max(_DELIMITERS, key=header_line.count)


def read_table(path: Path) -> list[list[str | None]]:
    """The rows of a CSV (`,`, `;` or tab, UTF-8) or of the first sheet of an XLSX file, header first."""
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise ImportRejected([f"{path.name}: old Excel files (.xls) are not read: save it as .xlsx or CSV"])
    try:
        if suffix in {".xlsx", ".xlsm"}:
            return _read_xlsx(path)
        content = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportRejected(["the file is not UTF-8 text: save it as 'CSV UTF-8' and try again"]) from exc
    except OSError as exc:
        raise ImportRejected([f"cannot read {path}: {exc.strerror or type(exc).__name__}"]) from exc
    if "\x00" in content:
        raise ImportRejected(["the file is not a CSV text file: save it as 'CSV UTF-8' or .xlsx"])
    reader = csv.reader(io.StringIO(content, newline=""), delimiter=_delimiter(content.split("\n", 1)[0]))
    try:
        return [[_cell(v) for v in row] for row in reader]
    except csv.Error as exc:
        raise ImportRejected([f"row {reader.line_num}: {exc}"]) from exc


def _describe(error: dict[str, Any], raw: dict[str, Any]) -> str:
    field = ".".join(str(p) for p in error["loc"]) or "row"
    if error["type"] == "missing":
        return f"{field}: required"
    if error["type"] == "extra_forbidden":
        return f"{field}: unknown column"
    value = raw.get(field)
    # Personal data is never repeated in a message: the row number and the column say where to look.
    got = f" (got '{value[:40]}')" if isinstance(value, str) and field not in PERSONAL_FIELDS else ""
    return f"{field}: {_HINTS.get(field, error['msg'])}{got}"


def _normalise(raw: dict[str, Any]) -> dict[str, Any]:
    """Repair what spreadsheets do to phone numbers: a number cell drops the leading 0 (81234… → 081234…)."""
    phone = raw.get("no_hp_wali")
    if isinstance(phone, str) and re.fullmatch(r"8\d{7,12}", phone):
        raw["no_hp_wali"] = "0" + phone
    return raw


def _too_long(table: Any, row: dict[str, Any]) -> list[str]:
    """Values longer than their database column allows (checked here so no database rejects them later)."""
    problems = []
    for name, value in row.items():
        limit = getattr(table.__table__.c[name].type, "length", None) if isinstance(value, str) else None
        if limit and len(value) > limit:
            problems.append(f"{name}: at most {limit} characters (got {len(value)})")
    return problems


def validate_rows(kind: Kind, table: list[list[str | None]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The file's columns and its rows as validated dicts; ImportRejected lists every problem found."""
    model, orm_table, key = _TARGETS[kind]
    if not table or not any(table[0]):
        raise ImportRejected(["the file is empty: the first row must name the columns"])
    header = [(h or "").strip().lower() for h in table[0]]
    allowed = list(model.model_fields)
    unknown = [h for h in header if h and h not in allowed]
    errors = [f"row 1: unknown column '{h}' (allowed: {', '.join(allowed)})" for h in unknown]
    errors += [f"row 1: column '{h}' appears twice" for i, h in enumerate(header) if h and h in header[:i]]
    required = [name for name, info in model.model_fields.items() if info.is_required()]
    errors += [f"row 1: required column '{name}' is missing" for name in required if name not in header]
    if errors:
        raise ImportRejected(errors)
    columns = [h for h in header if h]
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, values in enumerate(table[1:], start=2):
        if not any(values):
            continue
        named = header + [""] * (len(values) - len(header))
        unnamed = [i + 1 for i, v in enumerate(values) if v is not None and not named[i]]
        if unnamed:
            errors.append(f"row {number}: a value in column {unnamed[0]}, which has no name in row 1")
            continue
        raw = _normalise({h: v for h, v in zip(header, values, strict=False) if h and v is not None})
        try:
            row = model.model_validate(raw).model_dump(include=set(columns))
        except ValidationError as exc:
            errors += [f"row {number}: {_describe(dict(e), raw)}" for e in exc.errors()]
        else:
            errors += [f"row {number}: {problem}" for problem in _too_long(orm_table, row)]
            rows.append(row)
        if (value := raw.get(key)) is not None:
            if value in seen:
                errors.append(f"row {number}: {key} '{value}' already appears in row {seen[value]}")
            seen.setdefault(value, number)
    if errors:
        raise ImportRejected(errors)
    if not rows:
        raise ImportRejected(["the file has a header but no data rows"])
    return columns, rows


def import_file(sessions: sessionmaker[Session], kind: Kind, path: Path) -> ImportReport:
    """Validate the whole file, then upsert every row in one transaction."""
    _, table, key = _TARGETS[kind]
    _, rows = validate_rows(kind, read_table(path))
    with sessions() as session, session.begin():
        column = getattr(table, key)
        existing = crud.existing_ids(session, column, [r[key] for r in rows])
        crud.upsert(session, table, rows, key=(key,))
    return ImportReport(added=len(rows) - len(existing), updated=len(existing))
