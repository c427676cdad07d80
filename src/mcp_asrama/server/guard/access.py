"""Who is asking and what they may see: the pesantren's org chart as a token claim.

A claim such as `["kamar:Al-Fatih 1", "kelas:7A"]` (or the string `"kamar:Al-Fatih 1,kelas:7A"`) lets its holder
see the students living in room Al-Fatih 1 or in class 7A, nothing else; `["all"]` sees everything; no claim sees
nothing.

Roles (`peran:`) add what a job needs on top of that: `peran:kesehatan` (clinic staff) sees the health details of
clinic visits of the students in scope and may record visits; `peran:bk` (counselling) sees the violations
(pelanggaran) of every student, whatever the room/class scope. So the clinic is `["all", "peran:kesehatan"]`, a
counsellor `["peran:bk"]` (plus whatever else they may see). A role alone shows no other data, and no role widens
what may be written: every write follows the room/class scope.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from mcp.server.auth.middleware.auth_context import get_access_token

from mcp_asrama.names import fold, tidy

log = logging.getLogger(__name__)

LOCAL_SUBJECT = "local"
KINDS = frozenset({"kamar", "kelas"})
ROLE = "peran"
KESEHATAN, BK = "kesehatan", "bk"
ROLES = frozenset({KESEHATAN, BK})
_reported: set[str] = set()  # reasons already logged


def _ignored(reason: str) -> None:
    """Log once per process why a scope entry gives no access (never the entry: it may name a child's room)."""
    if reason not in _reported:
        _reported.add(reason)
        log.warning("scope claim entry gives no access", extra={"reason": reason})


@dataclass(frozen=True)
class Akses:
    """The students one principal may see: all, or those in some rooms (`kamar`) or classes (`kelas`).

    Names are kept as written (they are sent upstream as filters) and compared folded.
    """

    semua: bool = False
    kamar: frozenset[str] = field(default_factory=frozenset)
    kelas: frozenset[str] = field(default_factory=frozenset)
    peran: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, claim: object) -> "Akses":
        """From a claim value: a JSON list, or a comma-separated string, of `all`, `kamar:X`, `kelas:Y`, `peran:Z`.

        Never split on spaces (room names have them). An entry that is neither exactly `all` nor `kamar:`/`kelas:`
        followed by a name, nor `peran:` followed exactly by a known role (kesehatan, bk), grants nothing; each
        such reason is logged once per process, never the value.
        """
        if isinstance(claim, str):
            entries: Iterable[object] = claim.split(",")
        elif isinstance(claim, list | tuple):
            entries = claim
        else:
            if claim is not None:
                _ignored("the claim is neither a list nor a string")
            return cls()
        kamar: set[str] = set()
        kelas: set[str] = set()
        peran: set[str] = set()
        semua = False
        for entry in entries:
            if not isinstance(entry, str):
                _ignored("an entry is not a string")
                continue
            text = entry.strip()
            kind, colon, name = text.partition(":")
            if text == "all":
                semua = True
            elif not colon:
                _ignored("an entry is neither `all` nor `kind:name`")
            elif kind == ROLE:
                if name in ROLES:
                    peran.add(name)
                else:
                    _ignored("an entry names an unknown role (known: peran:kesehatan, peran:bk)")
            elif kind not in KINDS:
                _ignored("an entry names an unknown kind (known: kamar, kelas, peran)")
            elif not name.strip():
                _ignored("an entry has no name after its kind")
            else:
                (kamar if kind == "kamar" else kelas).add(tidy(name))
        return cls(semua=semua, kamar=frozenset(kamar), kelas=frozenset(kelas), peran=frozenset(peran))

    @property
    def kosong(self) -> bool:
        """Sees no student (a role alone gives no room or class)."""
        return not (self.semua or self.kamar or self.kelas)

    @property
    def klinik(self) -> bool:
        """Clinic staff (`peran:kesehatan`): may see and record health details of the students in scope."""
        return KESEHATAN in self.peran

    @property
    def bk(self) -> bool:
        """Counselling (`peran:bk`): sees the violations of every student (records only within the scope)."""
        return BK in self.peran

    def untuk_pelanggaran(self) -> "Akses":
        """What this principal may read of violations: everyone with `peran:bk`, else the room/class scope (never
        what it may write)."""
        return Akses(semua=True, peran=self.peran) if self.bk else self

    def melihat(self, *, kelas: str | None, kamar: str | None) -> bool:
        """Whether a student of `kelas` living in `kamar` is visible."""
        if self.semua:
            return True
        return (kamar is not None and fold(kamar) in self._kamar) or (kelas is not None and fold(kelas) in self._kelas)

    def boleh_kamar(self, kamar: str) -> bool:
        """Whether the room itself (its occupancy, its musyrif) is visible."""
        return self.semua or fold(kamar) in self._kamar

    def boleh_kelas(self, kelas: str) -> bool:
        """Whether the whole class is visible."""
        return self.semua or fold(kelas) in self._kelas

    # Folded once per principal (the dataclass is frozen; cached_property writes the instance's __dict__).
    @cached_property
    def _kamar(self) -> frozenset[str]:
        return frozenset(fold(k) for k in self.kamar)

    @cached_property
    def _kelas(self) -> frozenset[str]:
        return frozenset(fold(k) for k in self.kelas)


SEMUA = Akses(semua=True)


@dataclass(frozen=True)
class Principal:
    """The subject of a request (`local` for the operator on stdio) and what they may see."""

    subject: str
    akses: Akses
    client_id: str | None = None


def current_principal(scope_claim: str, local: Akses) -> Principal:
    """The principal of the request in progress: from its validated access token, or the local operator."""
    token = get_access_token()
    if token is None:
        return Principal(LOCAL_SUBJECT, local)
    claims = token.claims or {}
    return Principal(token.subject or token.client_id, Akses.parse(claims.get(scope_claim)), token.client_id)
