"""`/kelas`: the classes and how many students each has (what health counts need to keep small classes hidden)."""

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import func, select

from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.models import Anak

router = APIRouter(prefix="/kelas", tags=["kelas"], dependencies=[TokenDep])


class KelasPublic(BaseModel):
    """One class: its name (as stored, the first by sort order when spellings differ) and its students."""

    kelas: str
    jumlah_anak: int


class DaftarKelas(BaseModel):
    """`GET /kelas`."""

    data: list[KelasPublic]


@router.get("", response_model=DaftarKelas)
def daftar_kelas(session: SessionDep) -> DaftarKelas:
    """Every class (spellings that fold together are one class) with its number of students, by name."""
    rows = session.execute(
        select(func.min(Anak.kelas), func.count()).group_by(Anak.kelas_kunci).order_by(func.min(Anak.kelas))
    )
    return DaftarKelas(data=[KelasPublic(kelas=kelas, jumlah_anak=n) for kelas, n in rows])
