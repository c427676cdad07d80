"""`/perubahan`: the change feed as Server-Sent Events, one event per committed change in commit order, resumable
with `Last-Event-ID` (or `?sejak=` for curl).

The stream opens with `mulai` (the newest id, so a reader that resumes later misses nothing), then a `reset` when
the events after the resume point were pruned (or it names an id this database never gave: the reader refetches
everything), then the events after the resume point, then live ones; `: ping` every ASRAMA_PERUBAHAN_PING
seconds. It ends when the client goes, the service shuts down, or the database fails mid-stream: the reader
reconnects with its last id. Served by sse-starlette, which ends open streams when uvicorn is asked to stop.
"""

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sse_starlette import EventSourceResponse, ServerSentEvent

from mcp_asrama.service.crud import perubahan as crud_perubahan
from mcp_asrama.service.deps import TokenDep
from mcp_asrama.service.feed import POLL_SECONDS, Feed
from mcp_asrama.service.schemas.perubahan import Kepala, PerubahanPublic

log = logging.getLogger(__name__)

router = APIRouter(tags=["perubahan"], dependencies=[TokenDep])

PAGE = 500  # events read at once
SEND_TIMEOUT = 30.0  # seconds a reader may take to accept a frame before its stream is dropped
SHUTDOWN_GRACE = 2.0  # seconds a stream has to end by itself when the service stops, before it is cut
_RESUME = re.compile(r"[0-9]{1,18}")
_EXAMPLE = (
    'id: 41\nevent: mulai\ndata: {"id":41}\n\n'
    'id: 42\nevent: perubahan\ndata: {"id":42,"jenis":"absensi","tanggal":"2026-12-01","id_anak":"A001","kamar":null}'
    "\n\n: ping\n\n"
)
_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": (
            "text/event-stream: `mulai` (data: {id}), optionally `reset` (data: {id}), then one `perubahan` per "
            "change (data: PerubahanPublic: id, jenis, tanggal, id_anak, kamar); `: ping` comments between"
        ),
        "content": {"text/event-stream": {"schema": {"type": "string"}, "example": _EXAMPLE}},
    },
    422: {"description": "Last-Event-ID atau sejak bukan bilangan bulat 0 atau lebih"},
    503: {"description": "Database tidak tersedia"},
}


@dataclass(frozen=True)
class Mulai:
    """Where a stream starts: the newest id at connect time, the id after which events are sent, and whether
    the reader must refetch everything."""

    head: int
    since: int
    reset: bool


def _resume_point(value: str | None, name: str) -> int | None:
    if value is None or not value.strip():
        return None
    if not _RESUME.fullmatch(value.strip()):
        raise HTTPException(
            status_code=422, detail=f"{name} harus bilangan bulat 0 atau lebih: id perubahan terakhir yang diterima"
        )
    return int(value)


def opening(
    request: Request,
    last_event_id: Annotated[
        str | None, Header(alias="Last-Event-ID", description="Id perubahan terakhir yang diterima (melanjutkan)")
    ] = None,
    sejak: Annotated[str | None, Query(description="Seperti Last-Event-ID, untuk curl (header yang dipakai)")] = None,
) -> Mulai:
    """The stream's start, read before it opens (a database that does not answer is a 503, as on every route)."""
    header, query = _resume_point(last_event_id, "Last-Event-ID"), _resume_point(sejak, "sejak")
    given = header if header is not None else query
    with request.app.state.engine.connect() as conn:
        head = crud_perubahan.head_of(conn)
        oldest = crud_perubahan.oldest_of(conn)
    if given is None:
        return Mulai(head, head, reset=False)
    if given > head or (oldest is not None and given < oldest - 1):
        return Mulai(head, head, reset=True)
    return Mulai(head, given, reset=False)


def _frame(event: str, body: Kepala | PerubahanPublic) -> ServerSentEvent:
    return ServerSentEvent(body.model_dump_json(), event=event, id=str(body.id), sep="\n")


def _ping() -> ServerSentEvent:
    return ServerSentEvent(comment="ping", sep="\n")


def _read(engine: Engine, since: int) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return crud_perubahan.after(conn, since, PAGE)


async def _until_set(event: asyncio.Event | anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _frames(engine: Engine, feed: Feed, start: Mulai, closing: anyio.Event) -> AsyncIterator[ServerSentEvent]:
    """The stream's frames until `closing` (the service stops) or a database error; each read waits for a
    wake-up, at most POLL_SECONDS."""
    yield _frame("mulai", Kepala(id=start.head))
    if start.reset:
        yield _frame("reset", Kepala(id=start.head))
    last = start.since
    async with feed.subscribe() as woken:
        try:
            while not closing.is_set():
                woken.clear()
                rows = await anyio.to_thread.run_sync(_read, engine, last)
                for row in rows:
                    yield _frame("perubahan", PerubahanPublic(**row))
                    last = row["id"]
                if len(rows) < PAGE:
                    with anyio.move_on_after(POLL_SECONDS):
                        async with anyio.create_task_group() as waiting:
                            for event in (woken, closing):
                                waiting.start_soon(_until_set, event, waiting.cancel_scope)
        except SQLAlchemyError as exc:
            log.warning("change stream ended: database error %s; the reader reconnects", type(exc).__name__)


_DESCRIPTION = (
    f"Every committed change ({', '.join(crud_perubahan.JENIS)}) as one event with its\n"
    "kind and keys (tanggal, id_anak, kamar; never personal data), in commit order, ids strictly increasing.\n\n"
    "First frame `mulai` with the newest id; with `Last-Event-ID: N` (or `?sejak=N`) every event after N, else\n"
    "only new ones; `reset` when events after N were pruned (refetch everything); `: ping` as a heartbeat."
)
"""The route's description: every kind of the change feed (`contract.FeedKind`), named."""


@router.get("/perubahan", response_class=EventSourceResponse, responses=_RESPONSES, description=_DESCRIPTION)
async def perubahan(request: Request, start: Annotated[Mulai, Depends(opening)]) -> EventSourceResponse:
    """The change stream: `mulai`, maybe `reset`, then the events after the resume point and live ones
    (`_DESCRIPTION`)."""
    app = request.app
    closing = anyio.Event()  # set by sse-starlette when uvicorn is asked to stop: the stream ends cleanly
    return EventSourceResponse(
        _frames(app.state.engine, app.state.feed, start, closing),
        ping=app.state.settings.perubahan_ping,
        ping_message_factory=_ping,
        sep="\n",
        send_timeout=SEND_TIMEOUT,
        shutdown_event=closing,
        shutdown_grace_period=SHUTDOWN_GRACE,
    )
