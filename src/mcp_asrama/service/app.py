"""`create_app(settings)`: the data service as a FastAPI application."""

import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_asrama import __version__
from mcp_asrama.config import ServiceSettings
from mcp_asrama.contract import DOMAINS, FEED_KINDS, FITUR, FITUR_HEADER
from mcp_asrama.runtime.http_guard import HostOriginGate, HttpPolicy
from mcp_asrama.runtime.logs import route_template
from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud import hafalan as crud_hafalan
from mcp_asrama.service.crud import perubahan as crud_perubahan
from mcp_asrama.service.db import analyse_if_needed, init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.feed import Feed
from mcp_asrama.service.routes import docs, health, oauth_state, perubahan

log = logging.getLogger(__name__)


async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
    log.error("database error on %s %s: %s", request.method, route_template(request.scope), type(exc).__name__)
    return JSONResponse(status_code=503, content={"detail": "Database tidak tersedia, coba lagi nanti"})


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected %s on %s %s", type(exc).__name__, request.method, route_template(request.scope))
    return JSONResponse(status_code=500, content={"detail": "Kesalahan internal pada service"})


async def _invalid_request(_request: Request, exc: Exception) -> JSONResponse:
    """422 with where and what, never the value: FastAPI's own answer echoes `input` (and `ctx`), which may be a
    child's name or a clinic note. An unknown field's name is input too: it is shown as `?`."""
    assert isinstance(exc, RequestValidationError)
    detail = []
    for error in exc.errors():
        loc = list(error.get("loc", ()))
        if error.get("type") == "extra_forbidden" and loc:
            loc[-1] = "?"
        detail.append({"type": error.get("type"), "loc": loc, "msg": error.get("msg")})
    return JSONResponse(status_code=422, content={"detail": detail})


class FeatureHeader:
    """Every HTTP response, the gate's refusals too, names what this service honours beyond the tutorial's
    contract (`mcp_asrama.contract`); only an unexpected 500 (answered outside all middleware) does not."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append(FITUR_HEADER, FITUR)
            await send(message)

        await self.app(scope, receive, send_with_header)


def routers() -> list[APIRouter]:
    """Every domain's router (`mcp_asrama.service.routes.<name>`, in the order of `contract.DOMAINS`), then the
    change feed's, the health check's, the docs' and the sign-in's shared state's (`/oauth-state`)."""
    domains = [importlib.import_module(f"mcp_asrama.service.routes.{d.name}") for d in DOMAINS]
    return [module.router for module in (*domains, perubahan, health, docs, oauth_state)]


class NoToken(ValueError):
    """The service never serves data without a token (`ServiceSettings.with_token` supplies one)."""


def create_app(settings: ServiceSettings) -> FastAPI:
    """Build the service on `settings.db_url`, creating the schema if it is missing.

    Every data route (the change feed `/perubahan` too), `/docs` and `/openapi.json` need the token; only
    `/healthz` does not. Requests naming another Host (DNS rebinding) or sent by a browser page of an origin not
    in ASRAMA_SERVICE_ALLOWED_ORIGINS are refused.
    """
    if settings.token is None:
        raise NoToken("the data service needs a token: set ASRAMA_SERVICE_TOKEN or use ServiceSettings.with_token()")
    engine = make_engine(settings.db_url)
    init_schema(engine)
    with engine.begin() as conn:
        crud_common.rekey_names(conn)
    crud_hafalan.sum_up_waiting(make_sessionmaker(engine))
    analyse_if_needed(engine)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        engine.dispose()

    app = FastAPI(
        lifespan=lifespan,
        title="Service Data Anak Asrama",
        version=__version__,
        description=(
            f"Data {', '.join(FEED_KINDS[:-1])} dan {FEED_KINDS[-1]} asrama, dan aliran perubahannya "
            "(GET /perubahan, Server-Sent Events). Semua rute data memerlukan Bearer token."
        ),
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served by routes/docs.py, behind the token
    )
    app.state.settings = settings
    app.state.engine = engine
    retention = crud_perubahan.Retention(hari=settings.perubahan_hari, maks=settings.perubahan_maks)
    app.state.sessions = make_sessionmaker(engine, retention)
    app.state.feed = feed = Feed(settings.db_url)
    crud_perubahan.on_commit(app.state.sessions, lambda _newest: feed.wake())
    for router in routers():
        app.include_router(router)
    policy = HttpPolicy.of(settings.host, settings.service_allowed_hosts, settings.service_allowed_origins)
    app.add_middleware(HostOriginGate, policy=policy, host_exempt=("/healthz",))
    app.add_middleware(FeatureHeader)  # outermost: on the gate's refusals too
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(SQLAlchemyError, _database_unavailable)
    app.add_exception_handler(Exception, _internal_error)
    return app
