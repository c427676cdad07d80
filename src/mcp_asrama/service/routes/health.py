"""`/healthz`: is the service up and does its database answer (no auth, no data)."""

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from mcp_asrama.service.deps import SessionDep
from mcp_asrama.service.schemas.health import Kesehatan

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Kesehatan, responses={503: {"model": Kesehatan}})
def healthz(session: SessionDep) -> Kesehatan | JSONResponse:
    """200 when the database answers a trivial query, 503 otherwise."""
    try:
        session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        body = Kesehatan(status="error", database="unavailable")
        return JSONResponse(status_code=503, content=body.model_dump())
    return Kesehatan(status="ok", database="ok")
