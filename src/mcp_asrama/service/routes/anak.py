"""`/anak`: search students, read one."""

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query

from mcp_asrama.service.crud import anak as crud_anak
from mcp_asrama.service.deps import SessionDep, TokenDep
from mcp_asrama.service.routes.common import Filter
from mcp_asrama.service.schemas.anak import AnakPublic, DaftarAnak
from mcp_asrama.service.schemas.common import Cari, StatusAnak

router = APIRouter(prefix="/anak", tags=["anak"], dependencies=[TokenDep])


@router.get("", response_model=DaftarAnak)
def cari_anak(
    session: SessionDep,
    nama: Annotated[Cari | None, Query(description="Bagian nama, tanpa beda huruf besar/kecil")] = None,
    kelas: Filter = None,
    kamar: Filter = None,
    status: StatusAnak | None = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> DaftarAnak:
    """Students by part of the name and exact class, room or status (class and room up to case and spacing; several
    classes or rooms: any of them), ordered by name."""
    total, page = crud_anak.cari_anak(
        session,
        nama=(nama or "").strip() or None,
        kelas=kelas,
        kamar=kamar,
        status=status,
        limit=limit,
        offset=offset,
    )
    return DaftarAnak(total=total, data=[AnakPublic.model_validate(a) for a in page])


@router.get("/{id_anak}", response_model=AnakPublic, responses={404: {"description": "Anak tidak ditemukan"}})
def detail_anak(session: SessionDep, id_anak: Annotated[Cari, Path()]) -> AnakPublic:
    """One student, all fields."""
    anak = crud_anak.get_anak(session, id_anak)
    if anak is None:
        raise HTTPException(status_code=404, detail="Anak tidak ditemukan")
    return AnakPublic.model_validate(anak)
