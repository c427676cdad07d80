"""`/kamar`: rooms with their occupancy, and their musyrif as the staff list says (the stored column otherwise)."""

from fastapi import APIRouter

from mcp_asrama.names import fold
from mcp_asrama.service.crud import kamar as crud_kamar
from mcp_asrama.service.crud import pengurus as crud_pengurus
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.schemas.kamar import DaftarKamar, KamarPublic

router = APIRouter(prefix="/kamar", tags=["kamar"], dependencies=[TokenDep])


@router.get("", response_model=DaftarKamar)
def daftar_kamar(session: SessionDep) -> DaftarKamar:
    """Every room: building, capacity, musyrif (the active staff member with the musyrif role whose rooms hold it,
    else the room's own column) and `terisi`, the number of students assigned to it."""
    musyrif = crud_pengurus.penanggung_jawab(session, "musyrif", "kamar")
    rooms = crud_kamar.daftar_kamar(session)
    return DaftarKamar(
        data=[KamarPublic(**{**k, "musyrif": musyrif.get(fold(k["nama"]), k["musyrif"])}) for k in rooms]
    )
