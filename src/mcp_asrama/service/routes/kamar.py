"""`/kamar`: rooms with their occupancy."""

from fastapi import APIRouter

from mcp_asrama.service.crud import kamar as crud_kamar
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.schemas.kamar import DaftarKamar, KamarPublic

router = APIRouter(prefix="/kamar", tags=["kamar"], dependencies=[TokenDep])


@router.get("", response_model=DaftarKamar)
def daftar_kamar(session: SessionDep) -> DaftarKamar:
    """Every room: building, capacity, musyrif and `terisi`, the number of students assigned to it."""
    return DaftarKamar(data=[KamarPublic(**k) for k in crud_kamar.daftar_kamar(session)])
