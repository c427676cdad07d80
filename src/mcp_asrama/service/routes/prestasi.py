"""`/prestasi`: recording a student's achievement (idempotent under an `Idempotency-Key`), listing achievements,
and counting them per level, field and student. Service shapes: the contract's with who recorded and the student's
name and class (an achievement is meant to be told)."""

from datetime import date
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from mcp_asrama.contract import prestasi as wire
from mcp_asrama.contract.prestasi import BIDANG_PRESTASI, TINGKAT_PRESTASI, PrestasiIn
from mcp_asrama.service import records
from mcp_asrama.service.crud.anak import FilterValues, dated_filters
from mcp_asrama.service.deps import ActorDep, KeyDep, SessionDep, TokenDep
from mcp_asrama.service.models import Anak
from mcp_asrama.service.models.prestasi import Prestasi
from mcp_asrama.service.records import PagingDep, RecordFilterDep
from mcp_asrama.service.routes.common import DariWajib, Filter, SampaiWajib, check_period

router = APIRouter(prefix="/prestasi", tags=["prestasi"], dependencies=[TokenDep])


class PrestasiPublic(wire.Prestasi):
    """One achievement with the student's name, class and room, and who recorded it."""

    nama: str
    kelas: str
    dicatat_oleh: str | None = None


class DaftarPrestasi(wire.DaftarPrestasi):
    """`GET /prestasi`: how many match, and one page of them (latest first)."""

    data: list[PrestasiPublic]  # type: ignore[assignment]


@router.post(
    "", status_code=201, response_model=PrestasiPublic, response_model_exclude_none=True, responses=records.ERRORS
)
def catat_prestasi(request: Request, session: SessionDep, body: PrestasiIn, actor: ActorDep, key: KeyDep) -> Any:
    """Record an achievement on a day up to today. 404 unknown student."""
    return records.create_as_sent(
        request, session, body, actor, key, kind="prestasi", model=Prestasi, shape=PrestasiPublic
    )


@router.get("", response_model=DaftarPrestasi, response_model_exclude_none=True)
def daftar_prestasi(session: SessionDep, where: RecordFilterDep, paging: PagingDep) -> DaftarPrestasi:
    """Achievements by student, class, room (case-insensitive) and period, latest first."""
    return records.listing(session, Prestasi, where, paging, shape=PrestasiPublic, page=DaftarPrestasi)


def _counts(session: Session, dari: date, sampai: date, kelas: FilterValues, kamar: FilterValues) -> Any:
    """(student, bidang, tingkat, how many) of the achievements in [dari, sampai]."""
    where = dated_filters(session, Prestasi.tanggal, id_anak=None, kelas=kelas, kamar=kamar, dari=dari, sampai=sampai)
    return session.execute(
        select(Anak, Prestasi.bidang, Prestasi.tingkat, func.count())
        .join(Anak, Anak.id == Prestasi.id_anak)
        .where(*where)
        .group_by(Anak.no, Prestasi.bidang, Prestasi.tingkat)
    )


def _add(counts: dict[str, int], tingkat: str, n: int) -> None:
    if tingkat in counts:
        counts[tingkat] += n
    counts["jumlah"] += n


@router.get("/rekap", response_model=wire.RekapPrestasi, response_model_exclude_none=True)
def rekap_prestasi(
    session: SessionDep, dari: DariWajib, sampai: SampaiWajib, kelas: Filter = None, kamar: Filter = None
) -> wire.RekapPrestasi:
    """Achievements over [dari, sampai] (at most 366 days): in all per level, per field (every field, in order,
    zeros included) and per student with at least one, the highest levels first (most nasional, then provinsi,
    kabupaten, pesantren), then by name."""
    check_period(dari, sampai)
    zero = dict.fromkeys((*TINGKAT_PRESTASI, "jumlah"), 0)
    total, per_bidang = dict(zero), {b: dict(zero) for b in BIDANG_PRESTASI}
    students: dict[str, tuple[Anak, dict[str, int]]] = {}
    for anak, bidang, tingkat, n in _counts(session, dari, sampai, kelas, kamar):
        for counts in (
            total,
            per_bidang.setdefault(bidang, dict(zero)),
            students.setdefault(anak.id, (anak, dict(zero)))[1],
        ):
            _add(counts, tingkat, int(n))
    per_anak = [wire.RekapPrestasiAnak(**records.student(a), **counts) for a, counts in students.values()]
    per_anak.sort(key=lambda r: (*(-getattr(r, t) for t in reversed(TINGKAT_PRESTASI)), r.nama or "", r.id_anak))
    return wire.RekapPrestasi(
        dari=dari,
        sampai=sampai,
        jumlah_anak=len(per_anak),
        total=wire.JumlahTingkat(**total),
        per_bidang=[wire.PrestasiBidang(bidang=b, **c) for b, c in per_bidang.items()],
        per_anak=per_anak,
    )
