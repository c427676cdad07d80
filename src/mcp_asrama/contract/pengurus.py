"""`/pengurus`: the staff list, who is who at the school (an ustadz who is musyrif of a room, a wali kelas, the
clinic's staff), as written (`PengurusIn`) and as a client keeps it (`Pengurus`).

A staff member is known by their `email`, case folded wherever it is stored or looked up ("Ridwan@Sekolah.sch.id"
is "ridwan@sekolah.sch.id"). No answer here holds anything of a password: its hash never leaves the data service;
a local account's sign-in sends the password (`MasukIn`) and is told only the outcome (`HasilMasuk`).
"""

from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints

from mcp_asrama.contract.types import Rapi, Shape, Strict, TanpaNul, Teks

Peran = Literal["kantor", "musyrif", "wali_kelas", "kesehatan", "bk", "admin"]
PERAN: tuple[Peran, ...] = ("kantor", "musyrif", "wali_kelas", "kesehatan", "bk", "admin")
EMAIL_PATTERN = r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$"
MAX_UNITS = 50


def fold_email(value: str) -> str:
    """The form an email is stored and looked up in: trimmed and case folded."""
    return value.strip().casefold()


Email = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=254, pattern=EMAIL_PATTERN),
    TanpaNul,
    AfterValidator(fold_email),
]
"""A staff member's email (their sign-in name), case folded."""
Unit = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), TanpaNul, Rapi]
"""A room or class name, stored tidy (matched by its fold, as every room and class filter)."""


def _unique(values: list[str]) -> list[str]:
    """Each value once, in the order first given."""
    return list(dict.fromkeys(values))


class PengurusIn(Strict):
    """`PUT /pengurus/{email}` body, and a row of `mcp-asrama import pengurus`."""

    email: Annotated[Email, Field(description="the staff member's email, their sign-in name")]
    nama: Annotated[Teks, Field(description="full name, e.g. Ust. Ridwan")]
    peran: Annotated[
        list[Peran],
        Field(min_length=1, max_length=len(PERAN), description="roles: one or more of " + ", ".join(PERAN)),
        AfterValidator(_unique),
    ]
    kamar: Annotated[
        list[Unit],
        Field(default_factory=list, max_length=MAX_UNITS, description="the rooms they are musyrif of"),
        AfterValidator(_unique),
    ]
    kelas: Annotated[
        list[Unit],
        Field(default_factory=list, max_length=MAX_UNITS, description="the classes they are wali kelas of"),
        AfterValidator(_unique),
    ]
    menulis: Annotated[bool, Field(description="may record (attendance, violations, …) through the assistant")] = False
    aktif: Annotated[bool, Field(description="may sign in")] = True


class Pengurus(Shape):
    """One staff member: roles and the rooms and classes they answer for (never anything of a password)."""

    email: str
    nama: str
    peran: list[str]
    kamar: list[str] = Field(default_factory=list)
    kelas: list[str] = Field(default_factory=list)
    menulis: bool = False
    aktif: bool = True


class DaftarPengurus(Shape):
    """`GET /pengurus`."""

    data: list[Pengurus]


class MasukIn(Strict):
    """`POST /pengurus/{email}/masuk` body: the password of a local account, as typed (never trimmed)."""

    model_config = ConfigDict(str_strip_whitespace=False)

    sandi: Annotated[str, Field(min_length=1, max_length=1024, description="the password")]


class HasilMasuk(Shape):
    """A sign-in's outcome (always HTTP 200): `ok` (with `pengurus`), `salah` (unknown email, no password set or a
    wrong one), `terkunci` (too many wrong ones: try again in `coba_lagi_detik`), `nonaktif` (deactivated)."""

    hasil: Literal["ok", "salah", "terkunci", "nonaktif"]
    pengurus: Pengurus | None = None
    coba_lagi_detik: int | None = None
