"""Importing the pesantren's records: the kinds of violation (`jenis_pelanggaran`, upserted by `kode`), and the
dated records of each domain that has an import kind (violations, hafalan deposits, clinic visits, …: each row a
new record with a random handle, recorded by "import").

A dated domain whose import kind is its own name and that declares its `body` needs nothing here: its rows are its
body, stored in the table named like it (`derived_targets`), each column meant as the body's field describes it.
The staff list (`pengurus`) is updated by email. A cell of a list field holds its items separated by `;`, and a
boolean cell may say `ya`/`tidak` as well as `true`/`false` (`normalise`, from the model's field types); a choice,
a sex or a date may be written as people do (`spelling`).

`importer.py` reads and validates the file with the models named here, and asks `checker` about what only the
database knows (the student, the kind) and what a model cannot say (a day after today, ayat beyond the surah);
every problem names its row and column, and nothing is written unless every row passes.
"""

import re
import secrets
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import cache
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from mcp_asrama import quran
from mcp_asrama.contract import BY_NAME, DOMAINS
from mcp_asrama.contract.pengurus import PengurusIn, fold_email
from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud import hafalan as crud_hafalan
from mcp_asrama.service.crud import pengurus as crud_pengurus
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.models import Anak, JenisPelanggaran, KunjunganKlinik, table_class
from mcp_asrama.service.models.pengurus import Pengurus
from mcp_asrama.service.schemas.kesehatan import KATEGORI_KESEHATAN, KunjunganIn
from mcp_asrama.service.schemas.pelanggaran import JenisPelanggaranIn

IMPORT_ACTOR = "import"

Target = tuple[type[BaseModel], Any, str | None]
"""What rows of an import kind are: their model, the table they go to, the key they update by (None: each row is
new)."""


def derived_targets() -> dict[str, Target]:
    """The target of each dated domain's import kind named like it, from its `body` and the table named like it."""
    targets: dict[str, Target] = {}
    for d in DOMAINS:
        table = table_class(d.name)
        if d.dated and d.body is not None and d.name in d.imports and table is not None:
            targets[d.name] = (d.body, table, None)
    return targets


TARGETS: dict[str, Target] = {
    **derived_targets(),
    "jenis_pelanggaran": (JenisPelanggaranIn, JenisPelanggaran, "kode"),  # updated by its kode
    "kesehatan": (KunjunganIn, KunjunganKlinik, None),  # its table is kunjungan_klinik
    "pengurus": (PengurusIn, Pengurus, "email"),  # updated by its (case-folded) email
}
FEED_KINDS: dict[str, str] = {kind: d.name for d in DOMAINS for kind in d.imports}
"""Each import kind's domain (students and rooms too), whose change-feed kind an import records when it has a feed
(`feed_kinds`)."""
HINTS = {
    "id_anak": "the id of a student in the database (1-64 letters, digits, '-', '_' or '.')",
    "kode": "1-40 lower-case letters, digits, '_' or '-', e.g. membawa_hp",
    "kategori": "one of ringan, sedang, berat",
    "poin": "a whole number from 0 to 1000",
    "tanggal": "a valid date YYYY-MM-DD (or DD/MM/YYYY, DD-MM-YYYY), today at the latest",
    "jenis": "a kode of 'import jenis_pelanggaran' (ziyadah or murajaah for hafalan)",
    "surah": "the surah's number (1-114) or name (e.g. Al-Baqarah)",
    "ayat_mulai": "a whole number from 1, within the surah",
    "ayat_selesai": "a whole number from ayat_mulai, within the surah",
    "nilai": "a whole number from 0 to 100",
}
KIND_HINTS = {  # where a column means something else in a kind
    ("pengurus", "email"): "an email address such as ridwan@pesantren.sch.id (once in the file)",
    ("pengurus", "menulis"): "true or false (also ya or tidak)",
    ("pengurus", "aktif"): "true or false (also ya or tidak)",
    ("pengurus", "kamar"): "room names separated by ';'",
    ("pengurus", "kelas"): "class names separated by ';'",
    ("hafalan", "jenis"): "ziyadah (new) or murajaah (review)",
    ("kesehatan", "kategori"): "one of " + ", ".join(KATEGORI_KESEHATAN),
    ("pelanggaran", "jenis"): "a kode of the kinds stored (see 'import jenis_pelanggaran')",
}
MEANINGS: dict[str, dict[str, str]] = {
    "pengurus": {"peran": "roles, separated by ';'"},
    "jenis_pelanggaran": {
        "kode": "the kind's code",
        "nama": "what the kind is called",
        "kategori": "how serious",
        "poin": "default points",
    },
    "pelanggaran": {
        "id_anak": "the student's id",
        "tanggal": "the day",
        "jenis": "the kind of violation",
        "poin": "points (default: the kind's)",
        "kategori": "how serious (default: the kind's)",
        "keterangan": "a note, at most 500 characters",
    },
    "hafalan": {
        "id_anak": "the student's id",
        "tanggal": "the day of the deposit",
        "jenis": "the kind of deposit",
        "surah": "the surah",
        "ayat_mulai": "first ayat",
        "ayat_selesai": "last ayat",
        "nilai": "the mark",
        "penguji": "who heard it",
    },
    "kesehatan": {
        "id_anak": "the student's id",
        "tanggal": "the day of the visit",
        "keluhan": "the complaint, at most 500 characters",
        "kategori": "the category",
        "tindakan": "what was done",
        "obat": "medicine given",
        "rujukan": "referred to",
        "petugas": "the clinic staff member",
    },
}
HEALTH_FIELDS = frozenset({"keluhan", "tindakan", "obat", "rujukan"})


def choices(model: type[BaseModel], name: str) -> str | None:
    """The hint "one of a, b, c" for a field of `model` that takes one of some words (a Literal, maybe optional)."""
    field = model.model_fields.get(name)
    kinds = [field.annotation] if field is not None else []
    while kinds:
        kind = kinds.pop()
        if get_origin(kind) is Literal:
            return "one of " + ", ".join(str(v) for v in get_args(kind))
        kinds += [a for a in get_args(kind) if a is not type(None)]
    return None


BOOLEANS = {"true": True, "ya": True, "false": False, "tidak": False}
"""What a boolean cell may say."""


def _is(annotation: Any, kind: type) -> bool:
    """Whether a field's annotation is `kind` (a list: of anything), maybe optional."""
    kinds = [annotation]
    while kinds:
        found = kinds.pop()
        if found is kind or get_origin(found) is kind:
            return True
        kinds += [a for a in get_args(found) if get_origin(found) is not Literal and a is not type(None)]
    return False


def normalise(kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A cell of a list field becomes its `;`-separated items, a boolean cell's `ya`/`tidak`/`true`/`false` (any
    case) its value, a staff member's email its fold (so two spellings of one email are found twice in a file).
    A hafalan row may name its surah ("Al-Baqarah", "al baqarah", "Yasin"): the name becomes its number (one that
    names no surah is left for the validation to refuse)."""
    model = TARGETS[kind][0] if kind in TARGETS else None
    for name, field in (model.model_fields if model is not None else {}).items():
        value = raw.get(name)
        if isinstance(value, str) and _is(field.annotation, list):
            raw[name] = [item.strip() for item in value.split(";") if item.strip()]
        elif isinstance(value, str) and _is(field.annotation, bool):
            raw[name] = BOOLEANS.get(value.strip().lower(), value)
    if kind == "pengurus" and isinstance(raw.get("email"), str):
        raw["email"] = fold_email(raw["email"])
    surah = raw.get("surah")
    if kind == "hafalan" and isinstance(surah, str) and not surah.isdecimal() and (found := quran.find_surah(surah)):
        raw["surah"] = str(found.nomor)
    return raw


_SEXES = {"l": "L", "laki": "L", "lakilaki": "L", "pria": "L", "p": "P", "perempuan": "P", "wanita": "P"}
_DAY_FIRST = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")  # dd/mm/yyyy, dd-mm-yyyy, dd.mm.yyyy


def _words(annotation: Any) -> dict[str, str]:
    """The words a field (maybe optional, a list, annotated) takes, by their lower case."""
    kinds, words = [annotation], {}
    while kinds:
        kind = kinds.pop()
        if get_origin(kind) is Literal:
            words.update({v.lower(): v for v in get_args(kind) if isinstance(v, str)})
        else:
            kinds += [a for a in get_args(kind) if a is not type(None)]
    return words


def spelling(field: Any, name: str, value: Any) -> Any:
    """A cell as people write it, as the field takes it: a choice in any case, `laki-laki`/`perempuan` for L/P, a
    date as dd/mm/yyyy; anything else as it is (for the validation to judge)."""
    if isinstance(value, list):
        return [spelling(field, name, item) for item in value]
    if not isinstance(value, str):
        return value
    if name == "jenis_kelamin" and (sex := _SEXES.get(re.sub(r"[\s-]+", "", value.lower()))):
        return sex
    if (words := _words(field.annotation)) and (word := words.get(value.strip().lower())):
        return word
    if _is(field.annotation, date) and (day := _DAY_FIRST.fullmatch(value.strip())):
        return f"{day[4]}-{int(day[3]):02}-{int(day[1]):02}"
    return value


def checker(session: Session, kind: str) -> Callable[[dict[str, Any]], list[str]] | None:
    """What the database and the Qur'an say about a validated row of `kind`: its problems, each `column: why`."""
    if kind == "pengurus":

        def rooms(row: dict[str, Any]) -> list[str]:
            unknown = crud_pengurus.unknown_rooms(session, row.get("kamar") or [])
            return [f"kamar: {crud_pengurus.ROOMS_UNKNOWN.format(', '.join(unknown))}"] if unknown else []

        return rooms
    if TARGETS[kind][2] is not None:  # kinds of violation: nothing of a student to check
        return None

    @cache
    def student(id_anak: str) -> bool:
        return bool(crud_common.existing_ids(session, Anak.id, [id_anak]))

    @cache
    def jenis(kode: str) -> bool:
        return session.get(JenisPelanggaran, kode) is not None

    today = date.today()

    def check(row: dict[str, Any]) -> list[str]:
        problems = []
        if not student(row["id_anak"]):
            problems.append("id_anak: no such student (import anak first)")
        if row["tanggal"] > today:
            problems.append("tanggal: after today")
        if kind == "pelanggaran" and not jenis(row["jenis"]):
            problems.append("jenis: no such kind of violation (see 'import jenis_pelanggaran')")
        if kind == "hafalan" and (
            why := crud_hafalan.check_range(row["surah"], row["ayat_mulai"], row["ayat_selesai"])
        ):
            problems.append(f"ayat_selesai: {why}")
        return problems

    return check


def feed_kinds(kind: str) -> tuple[perubahan.Jenis, ...]:
    """The change-feed kinds an import of `kind` records: its domain's, or, for a domain without a feed, those of
    the domains that show its records (a staff list's: the room list, which names each room's musyrif)."""
    domain = BY_NAME[FEED_KINDS[kind]]
    return tuple(perubahan.jenis(name) for name in ((domain.name,) if domain.feed else domain.shown_in))


def write(session: Session, kind: str, rows: list[dict[str, Any]]) -> tuple[int, int]:
    """Store validated rows of `kind` in the session's transaction, with one change-feed event for the file (kinds
    of violation: a `pelanggaran` one, their names show in every list): (added, updated)."""
    model, table, key = TARGETS[kind]
    for feed in feed_kinds(kind):
        perubahan.catat(session, feed)
    if "diubah" in table.__table__.c:  # a table that keeps when a row last changed
        now = datetime.now(UTC)
        rows = [{**row, "diubah": now} for row in rows]
    if key is not None:
        existing = crud_common.existing_ids(session, getattr(table, key), [r[key] for r in rows])
        crud_common.upsert(session, table, rows, key=(key,))
        return len(rows) - len(existing), len(existing)
    now = datetime.now(UTC)
    full: list[dict[str, Any]] = [{name: row.get(name) for name in model.model_fields} for row in rows]
    if kind == "pelanggaran":
        kinds = {j.kode: j for j in session.scalars(select(JenisPelanggaran))}
        for row in full:
            row["poin"] = kinds[row["jenis"]].poin if row["poin"] is None else row["poin"]
            row["kategori"] = row["kategori"] or kinds[row["jenis"]].kategori
    for row in full:
        row.update(id=secrets.token_urlsafe(12), dicatat_oleh=IMPORT_ACTOR, dibuat=now)
    session.execute(insert(table), full)
    if kind == "hafalan":
        crud_hafalan.refresh(session, [row["id_anak"] for row in full])
    return len(full), 0
