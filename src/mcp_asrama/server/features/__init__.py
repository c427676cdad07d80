"""What the model sees, one module per domain with its tools, resources and prompts; `register` adds them all in a
fixed order (hosts cache the lists; a stable order keeps prompt caches warm). `laporan` holds the report prompts
that span domains.

A module `features/<name>.py` of a domain of `contract.DOMAINS` that the lists below do not name joins by itself:
after the listed domains (in the contract's order), before the proposals' tools and the reports, in both orders, so
every listed tool keeps its place in tools/list.

Each module says its own part of the server's instructions: `RINGKASAN` names its reads, `RINGKASAN_TULIS` its
writes; `instructions` composes them with the fixed opening and closing sentences.
"""

import importlib
import importlib.util
from types import ModuleType

from mcp_asrama.contract import DOMAINS as CONTRACT
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.features import (
    absensi,
    anak,
    catat_absensi,
    hafalan,
    izin,
    kamar,
    kesehatan,
    laporan,
    pelanggaran,
    usulan_tools,
)
from mcp_asrama.server.features.write import Konfirmasi

LISTED = (anak, kamar, absensi, pelanggaran, hafalan, kesehatan, catat_absensi, izin)


def _joined(listed: tuple[ModuleType, ...]) -> tuple[ModuleType, ...]:
    """The feature modules of the contract's domains that `listed` does not name, in the contract's order."""
    named = {module.__name__ for module in listed}
    found = [f"{__name__}.{d.name}" for d in CONTRACT if f"{__name__}.{d.name}" not in named]
    return tuple(importlib.import_module(name) for name in found if importlib.util.find_spec(name) is not None)


JOINED = _joined(LISTED)
DOMAINS = (*LISTED, *JOINED, usulan_tools, laporan)
# The instructions tell the domains as a person meets them: the day (attendance, leave), then the records.
TOLD = (anak, kamar, absensi, catat_absensi, izin, pelanggaran, hafalan, kesehatan, *JOINED, usulan_tools, laporan)
READS = (  # before and after the reads' summaries
    "Data anak asrama/pesantren: ",
    ". Jawab hanya dari hasil tool; jangan menebak. Data pribadi (NIK, nomor HP wali, alamat) tidak tersedia.",
)
WRITES = (  # before and after the writes' summaries
    " Bila wewenang Anda mengizinkan, ",
    ": setiap pencatatan ditanyakan dulu kepada pengguna dan hanya ditulis bila ia menyetujui.",
)


def register(server: AsramaServer, book: Konfirmasi) -> None:
    """Add the tools, resources and prompts of every domain; each write tool's declaration joins `book`, so that
    an usulan of it can be decided later."""
    for domain in DOMAINS:
        domain.register(server)
        for spec in getattr(domain, "PENULISAN", ()):
            book.tambah(spec)


def _series(parts: list[str]) -> str:
    """`a, b dan c`; a part that opens with a comma (an aside, e.g. `, bagi petugas klinik, ...`) goes last and
    follows `dan` directly."""
    *head, last = [p for p in parts if not p.startswith(",")] + [p for p in parts if p.startswith(",")]
    return ", ".join(head) + (" dan" if last.startswith(",") else " dan ") + last if head else last


def _told(summary: str, told: tuple[ModuleType, ...]) -> list[str]:
    return [part for domain in told if (part := getattr(domain, summary, None))]


def instructions(writes: bool, told: tuple[ModuleType, ...] = TOLD) -> str:
    """The server's instructions: what each domain of `told` reads, and with `writes` what it records."""
    lead, close = READS
    text = lead + _series(_told("RINGKASAN", told)) + close
    if writes:
        lead, close = WRITES
        text += lead + _series(_told("RINGKASAN_TULIS", told)) + close
    return text
