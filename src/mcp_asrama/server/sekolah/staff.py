"""What a staff member may see and do, from their record in the staff list (`pengurus`), computed whenever a token
is issued or refreshed: a musyrif moved to another room sees the new room with the next access token.

- `admin`, `kantor`: every student (`all`); `kesehatan`: every student and the clinic's details (`peran:kesehatan`);
- `bk`: the violations of every student (`peran:bk`);
- the rooms (`kamar`) and classes (`kelas`) of the record: the students living or learning there (a musyrif's
  rooms, a wali kelas's classes), whatever the role.
`asrama:write` is granted only to a record with `menulis` whose client asked for it.
"""

from dataclasses import dataclass

from mcp_asrama.contract.pengurus import Pengurus

READ, WRITE = "asrama:read", "asrama:write"
SCOPES = [READ, WRITE]
EVERYONE = frozenset({"admin", "kantor", "kesehatan"})
ROLES = {"kesehatan": "peran:kesehatan", "bk": "peran:bk"}


@dataclass(frozen=True)
class Grant:
    """The scopes and the `asrama_scope` claim of a token for one staff member."""

    scopes: list[str]
    claim: list[str]


def grant(staff: Pengurus, requested: list[str] | None) -> Grant:
    """The grant of an active staff member for a client that asked for `requested` (None: nothing named)."""
    claim = ["all"] if EVERYONE & set(staff.peran) else []
    claim += [ROLES[peran] for peran in staff.peran if peran in ROLES]
    claim += [f"kamar:{kamar}" for kamar in staff.kamar] + [f"kelas:{kelas}" for kelas in staff.kelas]
    scopes = [READ, WRITE] if staff.menulis and WRITE in (requested or ()) else [READ]
    return Grant(scopes, claim)


def describe(staff: Pengurus, scopes: list[str]) -> list[str]:
    """What the consent page says the grant is, one line each (Indonesian)."""
    lines = []
    if EVERYONE & set(staff.peran):
        lines.append("data semua anak")
    if staff.kamar:
        lines.append("data kamar " + ", ".join(staff.kamar))
    if staff.kelas:
        lines.append("data kelas " + ", ".join(staff.kelas))
    if "kesehatan" in staff.peran:
        lines.append("rincian kunjungan klinik")
    if "bk" in staff.peran:
        lines.append("pelanggaran semua anak")
    if not lines:
        lines.append("tidak ada data anak (belum ada kamar atau kelas)")
    lines.append("boleh mencatat" if WRITE in scopes else "hanya membaca")
    return lines
