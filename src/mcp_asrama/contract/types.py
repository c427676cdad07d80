"""The field types both sides share, and the two kinds of shape: what a client sends (`Strict`: unknown fields
refused, text trimmed, every field validated) and what it may keep of an answer (`Shape`: unknown fields dropped).

A `Shape` is the allowlist: a field it does not declare is never kept by a client, so no shape here declares a
student's personal data (`nik`, `no_hp_wali`, `alamat`, `tanggal_lahir`). The service's response schemas extend
the shapes with what only the service returns.
"""

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StringConstraints

from mcp_asrama.names import tidy

ID_PATTERN = r"^[A-Za-z0-9_.\-]{1,64}$"


def _without_nul(value: str) -> str:
    """Refuse NUL characters: PostgreSQL cannot store them and SQLite's full-text search cannot match them."""
    if "\x00" in value:
        raise ValueError("tidak boleh berisi karakter NUL")
    return value


def _blank_is_none(value: str | None) -> str | None:
    """A blank note is no note: it is stored as NULL and left out of responses."""
    return value or None


TanpaNul = AfterValidator(_without_nul)
Rapi = AfterValidator(tidy)
"""A room or class name is stored tidy (whitespace collapsed, `mcp_asrama.names`) and matched by its fold."""
AnakId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
Teks = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), TanpaNul]
Cari = Annotated[str, StringConstraints(max_length=200), TanpaNul]
"""A search term, filter or looked-up id in a request (query or path): at most 200 characters, no NUL."""
Catatan = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=500), TanpaNul, AfterValidator(_blank_is_none)
]
"""An optional note of up to 500 characters (a blank one is none)."""
NamaOrang = Annotated[
    str, StringConstraints(strip_whitespace=True, max_length=200), TanpaNul, AfterValidator(_blank_is_none)
]
"""An optional person's name (an examiner, the clinic's staff; a blank one is none)."""
StatusAnak = Literal["aktif", "izin", "sakit", "pulang"]
StatusAbsensi = Literal["hadir", "izin", "sakit", "alpa"]
StatusHarian = Literal["hadir", "izin", "sakit", "alpa", "belum_dicatat"]
"""The status of a row of `GET /absensi`: one recorded, or `belum_dicatat` (a student without a record that day)."""
JenisKelamin = Literal["L", "P"]


def _iso_date_text(value: object) -> object:
    """Only `YYYY-MM-DD` text is a date here (pydantic would also take numbers as timestamps)."""
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("tanggal harus berformat YYYY-MM-DD")
    if isinstance(value, int | float):
        raise ValueError("tanggal harus berformat YYYY-MM-DD")
    return value


Tanggal = Annotated[date, BeforeValidator(_iso_date_text)]
STATUS_ABSENSI: tuple[StatusAbsensi, ...] = ("hadir", "izin", "sakit", "alpa")
BELUM_DICATAT: StatusHarian = "belum_dicatat"


class Strict(BaseModel):
    """An input shape: unknown fields refused, text trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Shape(BaseModel):
    """An answer's shape as a client keeps it: fields it does not declare are dropped; never changed once read."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Rekaman(Shape):
    """A record of one student, with who the student is (never their personal data)."""

    id: str
    id_anak: str
    nama: str | None = None
    kelas: str | None = None
    kamar: str | None = None
