"""Import students or rooms from CSV or XLSX: every row validated, all or nothing, upsert by key."""

import csv
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from openpyxl import load_workbook
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
    "tanggal_lahir": "a date YYYY-MM-DD",
    "status": "one of aktif, izin, sakit, pulang",
    "jenis_kelamin": "L or P",
    "kapasitas": "a whole number from 0 to 1000",
}


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


def read_table(path: Path) -> list[list[str | None]]:
    """The rows of a CSV (`,` or `;`, UTF-8) or of the first sheet of an XLSX file, header first."""
    if path.suffix.lower() in {".xlsx", ".xlsm"}:
        workbook = load_workbook(path, read_only=True, data_only=True)
        try:
            return [[_cell(v) for v in row] for row in workbook.worksheets[0].iter_rows(values_only=True)]
        finally:
            workbook.close()
    try:
        content = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportRejected(["the file is not UTF-8 text: save it as 'CSV UTF-8' and try again"]) from exc
    try:
        dialect: Any = csv.Sniffer().sniff(content.split("\n", 1)[0], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    return [[_cell(v) for v in row] for row in csv.reader(content.splitlines(), dialect)]


def _describe(error: dict[str, Any]) -> str:
    field = ".".join(str(p) for p in error["loc"]) or "row"
    if error["type"] == "missing":
        return f"{field}: required"
    if error["type"] == "extra_forbidden":
        return f"{field}: unknown column"
    return f"{field}: {_HINTS.get(field, error['msg'])}"


def validate_rows(kind: Kind, table: list[list[str | None]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The file's columns and its rows as validated dicts; ImportRejected lists every problem found."""
    model, _, key = _TARGETS[kind]
    if not table or not any(table[0]):
        raise ImportRejected(["the file is empty: the first row must name the columns"])
    header = [(h or "").strip().lower() for h in table[0]]
    allowed = list(model.model_fields)
    errors = [
        f"row 1: unknown column '{h}' (allowed: {', '.join(allowed)})" for h in header if h not in allowed
    ]
    errors += [f"row 1: column '{h}' appears twice" for i, h in enumerate(header) if h and h in header[:i]]
    required = [name for name, info in model.model_fields.items() if info.is_required()]
    errors += [f"row 1: required column '{name}' is missing" for name in required if name not in header]
    if errors:
        raise ImportRejected(errors)
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, values in enumerate(table[1:], start=2):
        if not any(values):
            continue
        raw = {h: v for h, v in zip(header, values, strict=False) if h}
        try:
            row = model.model_validate(raw).model_dump(include=set(header))
        except ValidationError as exc:
            errors += [f"row {number}: {_describe(dict(e))}" for e in exc.errors()]
            continue
        if row[key] in seen:
            errors.append(f"row {number}: {key} '{row[key]}' already appears in row {seen[row[key]]}")
        seen[row[key]] = number
        rows.append(row)
    if errors:
        raise ImportRejected(errors)
    if not rows:
        raise ImportRejected(["the file has a header but no data rows"])
    return header, rows


def import_file(sessions: sessionmaker[Session], kind: Kind, path: Path) -> ImportReport:
    """Validate the whole file, then upsert every row in one transaction."""
    _, table, key = _TARGETS[kind]
    _, rows = validate_rows(kind, read_table(path))
    with sessions() as session, session.begin():
        column = getattr(table, key)
        existing = crud.existing_ids(session, column, [r[key] for r in rows])
        crud.upsert(session, table, rows, key=(key,))
    return ImportReport(added=len(rows) - len(existing), updated=len(existing))
