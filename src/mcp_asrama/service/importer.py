"""Import students, rooms and the pesantren's records (`import_pesantren`: kinds of violation, violations, hafalan
deposits, clinic visits) from CSV or XLSX: every row validated, all or nothing, upsert by key (records: each row new).

Rows are numbered as a spreadsheet shows them (the header is row 1). Columns the file does not have are left
as they are on students and rooms that already exist; an empty cell clears its field. A student's `kamar` must be a
room in the database (compared case-insensitively, as `GET /kamar` counts its students), unless the import is asked
to create the missing rooms.

Real spreadsheets are read as people write them: header names in any case and spacing (`Tanggal Lahir`), columns
of no kind ignored with one warning (refused when strict), choices in any case (`Aktif`), `laki-laki`/`perempuan`
for `L`/`P`, dates as `dd/mm/yyyy` or `dd-mm-yyyy` too. A NIK or phone held as a number of more than 15 digits is
refused: a spreadsheet keeps only 15, so its last digits may already have changed.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from sqlalchemy import insert
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.contract import IMPORT_KINDS
from mcp_asrama.names import fold
from mcp_asrama.service import import_pesantren as pesantren
from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud import kamar as crud_kamar
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.db import refresh_statistics
from mcp_asrama.service.import_files import ImportRejected, Number, Table, read_table
from mcp_asrama.service.models import Anak, Kamar
from mcp_asrama.service.schemas.anak import AnakIn
from mcp_asrama.service.schemas.kamar import KamarIn

Kind = str
"""What `import` reads: one of `KINDS`, the import kinds of `contract.DOMAINS`."""
KINDS: tuple[Kind, ...] = IMPORT_KINDS
_BY_KIND: dict[str, tuple[type[BaseModel], Any, str | None]] = {
    "anak": (AnakIn, Anak, "id"),
    "kamar": (KamarIn, Kamar, "nama"),
    **pesantren.TARGETS,
}
_TARGETS = {kind: _BY_KIND[kind] for kind in KINDS}  # model, table, key of each kind, in the order of KINDS
_HINTS = {  # the form a value must have: in row errors and in the column list
    "id": "1-64 letters, digits, '-', '_' or '.'",
    "nik": "16 digits",
    "no_hp_wali": "a phone number such as 081234567890",
    "tanggal_lahir": "a valid date YYYY-MM-DD (or DD/MM/YYYY, DD-MM-YYYY)",
    "status": "one of aktif, izin, sakit, pulang",
    "jenis_kelamin": "L or P (also laki-laki, perempuan)",
    "kapasitas": "a whole number from 0 to 1000",
}
_MEANINGS: dict[str, dict[str, str]] = {  # what each column of the file holds, for the column list
    "anak": {
        "id": "the student's number at the school",
        "nama": "full name",
        "kelas": "class, e.g. 7A",
        "kamar": "room: one already in the database (import kamar first), or add --buat-kamar",
        "status": "today's status",
        "jenis_kelamin": "sex",
        "nama_wali": "guardian's name",
        "nik": "national identity number",
        "no_hp_wali": "guardian's phone",
        "alamat": "home address",
        "tanggal_lahir": "date of birth",
    },
    "kamar": {
        "nama": "room name, e.g. Al-Fatih 1",
        "gedung": "building, e.g. Putra or Putri",
        "kapasitas": "beds",
        "musyrif": "the ustadz or ustadzah in charge",
    },
    **pesantren.MEANINGS,
}
# A room created for students who name one that does not exist: its building from their jenis_kelamin.
_GEDUNG = {"L": "Putra", "P": "Putri"}
GEDUNG_UNKNOWN = "Belum ditentukan"

PERSONAL_FIELDS = frozenset({"nik", "no_hp_wali", "alamat", "tanggal_lahir"})


def _hint(kind: str, name: str) -> str | None:
    """The form a column's value must have: as said for the kind, for students and rooms, by the field's choices (a
    Literal), then as said for the pesantren's records."""
    return (
        pesantren.KIND_HINTS.get((kind, name))
        or _HINTS.get(name)
        or pesantren.choices(_TARGETS[kind][0], name)
        or pesantren.HINTS.get(name)
    )


def meaning(kind: str, model: type[BaseModel], name: str) -> str:
    """What column `name` of a file of `kind` holds: as said here, else as the model's field describes it."""
    return _MEANINGS.get(kind, {}).get(name) or model.model_fields[name].description or name


def columns_help() -> str:
    """The columns of each kind of file as the importer defines them (required or not, form, default, personal
    data), for `import --help`."""
    lines = []
    for kind, (model, _, _) in _TARGETS.items():
        lines.append(f"columns of 'import {kind}' (a header row names them, in any order and case):")
        for name, info in model.model_fields.items():
            hint = _hint(kind, name)
            text = meaning(kind, model, name) + (f": {hint}" if hint else "")
            default = None if info.is_required() else info.get_default(call_default_factory=True)
            if default is not None and default != []:
                text += f" (default {default})"
            mark = "*" if name in PERSONAL_FIELDS else "+" if name in pesantren.HEALTH_FIELDS else " "
            lines.append(f"  {name:<14}{mark} {'required' if info.is_required() else 'optional'}  {text}")
    lines.append("* personal data: stored by the data service, never shown to the AI.")
    lines.append("+ health data: shown only to clinic staff (peran:kesehatan).")
    lines.append("A column the file leaves out keeps what is stored; an empty cell clears the field.")
    lines.append("Other columns (No, NIS, ...) are ignored with one warning; --ketat refuses them.")
    new = ", ".join(kind for kind, (_, _, key) in _TARGETS.items() if key is None)
    lines.append(f"{new}: every row is a new record (a file imported twice is recorded twice).")
    return "\n".join(lines)


@dataclass(frozen=True)
class ImportReport:
    """What an import did: rows added and updated, and the rooms it created for them (by name)."""

    added: int
    updated: int
    rooms_created: tuple[str, ...] = ()


def _describe(kind: str, error: dict[str, Any], raw: dict[str, Any]) -> str:
    loc = error["loc"]
    field = str(loc[0]) if len(loc) == 2 and isinstance(loc[1], int) else ".".join(str(p) for p in loc) or "row"
    if error["type"] == "missing":
        return f"{field}: required"
    if error["type"] == "extra_forbidden":
        return f"{field}: unknown column"
    # No value is ever repeated (a name, a clinic category): the row number and the column say where to look.
    if hint := _hint(kind, field):
        return f"{field}: {hint}"
    value, message = raw.get(field), str(error["msg"])
    return f"{field}: {'not valid' if isinstance(value, str) and value in message else message}"


EXACT_DIGITS = 15
"""The significant digits a spreadsheet keeps of a number: a NIK or phone held as a longer number is refused."""
_DIGIT_FIELDS = ("nik", "no_hp_wali")


def _normalise(kind: str, model: type[BaseModel], raw: dict[str, Any]) -> dict[str, Any]:
    """Repair what spreadsheets do to phone numbers (a number cell drops the leading 0: 81234… → 081234…), take
    each cell as people spell it, and make number cells plain text."""
    raw = {name: str(value) if isinstance(value, Number) else value for name, value in raw.items()}
    phone = raw.get("no_hp_wali")
    if isinstance(phone, str) and re.fullmatch(r"8\d{7,12}", phone):
        raw["no_hp_wali"] = "0" + phone
    raw = pesantren.normalise(kind, raw)
    return {name: pesantren.spelling(model.model_fields[name], name, value) for name, value in raw.items()}


def _inexact(raw: dict[str, Any]) -> list[str]:
    """The digit columns (NIK, phone) of the row held as numbers longer than a spreadsheet keeps exactly: each is
    taken out of `raw` and named (never its value: personal data)."""
    names = [
        n for n in _DIGIT_FIELDS if isinstance(raw.get(n), Number) and sum(map(str.isdigit, raw[n])) > EXACT_DIGITS
    ]
    for name in names:
        del raw[name]
    return [
        f"{name}: a number of more than {EXACT_DIGITS} digits, which a spreadsheet cannot hold exactly (its last "
        f"digits may have changed): format the column {name} as text and type the numbers again"
        for name in names
    ]


def _too_long(table: Any, row: dict[str, Any]) -> list[str]:
    """Values longer than their database column allows (checked here so no database rejects them later)."""
    problems = []
    for name, value in row.items():
        limit = getattr(table.__table__.c[name].type, "length", None) if isinstance(value, str) else None
        if limit and len(value) > limit:
            problems.append(f"{name}: at most {limit} characters (got {len(value)})")
    return problems


Progress = Callable[[int, int], None]  # (data rows checked, data rows in the file)


def _column(cell: str | None) -> str:
    """A header cell as the column it names: any case, spaces or '-' for '_' (`Tanggal Lahir`: tanggal_lahir)."""
    return re.sub(r"[\s-]+", "_", (cell or "").strip().lower())


def _shown(cell: str, number: int) -> str:
    """A header cell in a warning: its text when it looks like a column's name, else its number (a data row where
    the header should be may hold a name or a NIK)."""
    text = cell.strip()
    return text if len(text) <= 40 and "@" not in text and not re.search(r"\d{5}", text) else f"column {number}"


def _header(
    kind: str, table: Table, strict: bool, warn: Callable[[str], None] | None
) -> tuple[list[str | None], list[str]]:
    """The column each header cell names (None: unnamed or ignored) and the file's columns; ImportRejected when the
    header cannot be used. A cell naming no column is refused when `strict` or when a required column is missing
    (it may be that one misspelt; named by its number), else ignored with one line told to `warn`."""
    model = _TARGETS[kind][0]
    header = [_column(h) for h in table[0]]
    allowed = list(model.model_fields)
    unknown = [i for i, h in enumerate(header) if h and h not in allowed]
    required = [name for name, info in model.model_fields.items() if info.is_required()]
    errors = [f"row 1: required column '{name}' is missing" for name in required if name not in header]
    errors += [f"row 1: column '{h}' appears twice" for i, h in enumerate(header) if h in allowed and h in header[:i]]
    if unknown and (strict or errors):
        errors[:0] = [
            f"row 1: column {i + 1}: not a column of '{kind}' (allowed: {', '.join(allowed)})" for i in unknown
        ]
    if errors:
        raise ImportRejected(errors)
    if unknown and warn is not None:
        names = ", ".join(_shown(table[0][i] or "", i + 1) for i in unknown)
        warn(f"warning: ignoring the columns that are not of '{kind}': {names} (--ketat refuses such a file)")
    return [None if i in unknown else h or None for i, h in enumerate(header)], [h for h in header if h in allowed]


def validate_rows(
    kind: Kind,
    table: Table,
    room_exists: Callable[[str], bool] | None = None,
    check: Callable[[dict[str, Any]], list[str]] | None = None,
    progress: Progress | None = None,
    *,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The file's columns and its rows as validated dicts; ImportRejected lists every problem of every row found,
    including a `kamar` for which `room_exists` (when given) is false and what `check` (when given) finds in a
    valid row. Columns of no kind are ignored with a line told to `warn`, or refused when `strict`. `progress` hears
    of each data row as it is checked."""
    model, orm_table, key = _TARGETS[kind]
    if not table or not any(table[0]):
        raise ImportRejected(["the file is empty: the first row must name the columns"])
    names, columns = _header(kind, table, strict, warn)
    errors: list[str] = []
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, values in enumerate(table[1:], start=2):
        if progress is not None:
            progress(number - 1, len(table) - 1)
        if not any(values):
            continue
        unnamed = [
            i + 1 for i, v in enumerate(values) if v is not None and (i >= len(names) or not _column(table[0][i]))
        ]
        if unnamed:
            errors.append(f"row {number}: a value in column {unnamed[0]}, which has no name in row 1")
            continue
        raw = {name: v for name, v in zip(names, values, strict=False) if name and v is not None}
        problems = _inexact(raw)
        raw = _normalise(kind, model, raw)
        room = raw.get("kamar")  # checked in a row with other errors too, so one pass finds every missing room
        try:
            row = model.model_validate(raw).model_dump(include=set(columns))
        except ValidationError as exc:
            problems += [_describe(kind, dict(e), raw) for e in exc.errors()]
        else:
            room = row.get("kamar")
            problems += _too_long(orm_table, row) + (check(row) if check else [])
            rows.append(row)
        if room_exists is not None and isinstance(room, str) and room.strip() and not room_exists(room.strip()):
            problems.append("kamar: no such room (import the rooms first with 'import kamar', or add --buat-kamar)")
        errors += [f"row {number}: {problem}" for problem in problems]
        if key is not None and (value := raw.get(key)) is not None:
            if value in seen:
                errors.append(f"row {number}: {key}: the same as in row {seen[value]}")
            seen.setdefault(value, number)
    if errors:
        raise ImportRejected(errors)
    if not rows:
        raise ImportRejected(["the file has a header but no data rows"])
    return columns, rows


def _room_finder(session: Session) -> Callable[[str], bool]:
    """Whether a room of that name is stored, by the names' fold as every filter compares (one query per name)."""

    @cache
    def exists(name: str) -> bool:
        return crud_kamar.stored_room(session, name) is not None

    return exists


def _missing_rooms(rows: list[dict[str, Any]], room_exists: Callable[[str], bool]) -> list[dict[str, Any]]:
    """A room for each name the students give that is not stored: in the building of their jenis_kelamin (when
    they all share one), with as many beds as students it receives; no musyrif."""
    placed: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("kamar") and not room_exists(row["kamar"]):
            placed.setdefault(fold(row["kamar"]), []).append(row)
    rooms = []
    for students in placed.values():
        sexes = {s.get("jenis_kelamin") for s in students}
        shared = sexes.pop() if len(sexes) == 1 else None
        gedung = _GEDUNG[shared] if shared else GEDUNG_UNKNOWN
        rooms.append({"nama": students[0]["kamar"], "gedung": gedung, "kapasitas": min(len(students), 1000)})
    return rooms


def _refresh_statistics(sessions: sessionmaker[Session]) -> None:
    with sessions() as session:
        refresh_statistics(session)


def import_file(
    sessions: sessionmaker[Session],
    kind: Kind,
    path: Path,
    *,
    create_rooms: bool = False,
    progress: Progress | None = None,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
) -> ImportReport:
    """Validate the whole file (a student's room against the database; each row told to `progress`), then write
    every row in one transaction; with `create_rooms`, a room that students name and that is not stored is created
    instead of refused. A column of no kind is ignored with one line told to `warn`, or refused when `strict`
    (`import --ketat`). The change feed gets one event of the kind for the whole file (any of them may have
    changed), and for students also one of `kamar` when rooms were created or the file places students. The
    planner's statistics are refreshed after the commit."""
    _, table, key = _TARGETS[kind]
    content = read_table(path)
    if kind in pesantren.TARGETS:
        with sessions() as session, session.begin():
            _, rows = validate_rows(
                kind, content, check=pesantren.checker(session, kind), progress=progress, strict=strict, warn=warn
            )
            added, updated = pesantren.write(session, kind, rows)
        _refresh_statistics(sessions)
        return ImportReport(added=added, updated=updated)
    assert key is not None
    with sessions() as session, session.begin():
        room_exists = _room_finder(session)
        checked = room_exists if kind == "anak" and not create_rooms else None
        _, rows = validate_rows(kind, content, checked, progress=progress, strict=strict, warn=warn)
        rooms = _missing_rooms(rows, room_exists) if kind == "anak" and create_rooms else []
        if rooms:
            session.execute(insert(Kamar), rooms)
        column = getattr(table, key)
        existing = crud_common.existing_ids(session, column, [r[key] for r in rows])
        try:
            crud_common.upsert(session, table, rows, key=(key,))
        except crud_kamar.NameClash as clash:
            raise ImportRejected([str(clash)]) from clash
        perubahan.catat(session, perubahan.jenis(pesantren.FEED_KINDS[kind]))
        if kind == "anak" and (rooms or "kamar" in rows[0]):  # rooms created, or their occupancy may have changed
            perubahan.catat(session, "kamar")
    _refresh_statistics(sessions)
    return ImportReport(
        added=len(rows) - len(existing), updated=len(existing), rooms_created=tuple(r["nama"] for r in rooms)
    )
