"""`/kelas`: the classes, how many students each has (what health counts need to keep small classes hidden), and
each one's wali kelas as the staff list says."""

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import func, select

from mcp_asrama.names import fold
from mcp_asrama.service.crud import pengurus as crud_pengurus
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.models import Anak

router = APIRouter(prefix="/kelas", tags=["kelas"], dependencies=[TokenDep])


class KelasPublic(BaseModel):
    """One class: its name (as stored, the first by sort order when spellings differ), its students, and its wali
    kelas (the active staff member with that role whose classes hold it; none when the staff list names nobody)."""

    kelas: str
    jumlah_anak: int
    wali_kelas: str | None = None


class DaftarKelas(BaseModel):
    """`GET /kelas`."""

    data: list[KelasPublic]


@router.get("", response_model=DaftarKelas)
def daftar_kelas(session: SessionDep) -> DaftarKelas:
    """Every class (spellings that fold together are one class) with its number of students and its wali kelas, by
    name."""
    rows = session.execute(
        select(func.min(Anak.kelas), func.count()).group_by(Anak.kelas_kunci).order_by(func.min(Anak.kelas))
    )
    wali = crud_pengurus.penanggung_jawab(session, "wali_kelas", "kelas")
    return DaftarKelas(
        data=[KelasPublic(kelas=kelas, jumlah_anak=n, wali_kelas=wali.get(fold(kelas))) for kelas, n in rows]
    )
