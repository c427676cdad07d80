"""`/openapi.json` and `/docs` behind the service's token: they list the personal-data fields.

A browser opening `/docs` is asked for a password: any user name and the service's token (HTTP Basic, which the
browser then also sends for the page's own fetch of `/openapi.json`); other clients send the Bearer token.
"""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from mcp_asrama.service.deps import DocsTokenDep

router = APIRouter(include_in_schema=False, dependencies=[DocsTokenDep])


@router.get("/openapi.json")
def openapi(request: Request) -> dict[str, Any]:
    """The OpenAPI description of every route."""
    return request.app.openapi()  # type: ignore[no-any-return]


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """The interactive API documentation (Swagger UI)."""
    return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{request.app.title} - docs")
