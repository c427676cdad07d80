"""Following the data service's change feed (`GET /perubahan`, Server-Sent Events) without missing a change.

`follow` keeps one stream open for as long as it runs: it remembers the id of the last event it saw (every stream
opens with the head's id, `mulai`) and reconnects with `Last-Event-ID` after any failure, waiting a little longer
each time (up to `MAX_WAIT`), so an event committed while the stream was down arrives after the reconnect. When
the service says events were pruned before the reader caught up (`reset`), `on_reset` runs: whoever shows data
must refetch it. A service without a feed (an older or a school's own service answering 404) is followed no
further: the server still answers every request, it just never hears of changes.
"""

import logging
from collections.abc import Awaitable, Callable

import anyio
import httpx2
from pydantic import ValidationError

from mcp_asrama.contract import FeedKind
from mcp_asrama.contract.perubahan import Perubahan, Posisi

__all__ = ["PATH", "Jenis", "Perubahan", "Posisi", "follow"]

log = logging.getLogger(__name__)

PATH = "/perubahan"
FIRST_WAIT = 0.2  # seconds before the first reconnect; doubled after each failure
MAX_WAIT = 5.0
READ_TIMEOUT = 60.0  # the service pings every 15 s by default: a minute of silence is a dead stream

Jenis = FeedKind  # a change's kind: the name of a domain with a feed


async def follow(
    http: httpx2.AsyncClient,
    on_change: Callable[[Perubahan], Awaitable[None]],
    on_reset: Callable[[], Awaitable[None]],
    *,
    on_open: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Follow the feed until cancelled; returns only when the service has no feed (404)."""
    last: int | None = None
    wait = FIRST_WAIT
    failing = False
    while True:
        headers = {"Accept": "text/event-stream"}
        if last is not None:
            headers["Last-Event-ID"] = str(last)
        timeout = httpx2.Timeout(http.timeout.connect, read=READ_TIMEOUT, write=http.timeout.write, pool=None)
        try:
            async with http.stream("GET", PATH, headers=headers, timeout=timeout) as response:
                if response.status_code == 404:
                    log.warning("the data service has no change feed (GET /perubahan is 404): no live updates")
                    return
                if response.status_code != 200:
                    raise _Refused(response.status_code)
                async for sse in httpx2.EventSource(response):
                    last = await _handle(sse, last, on_change, on_reset)
                    if sse.event == "mulai":
                        wait, failing = FIRST_WAIT, False
                        log.info("following the change feed", extra={"since": last})
                        if on_open is not None:
                            await on_open()
        except (httpx2.HTTPError, _Refused, ValidationError, ValueError) as exc:
            if not failing:  # once per outage, not once per retry
                log.warning("change feed interrupted; reconnecting", extra={"error": _describe(exc)})
            failing = True
        await anyio.sleep(wait)
        wait = min(wait * 2, MAX_WAIT)


class _Refused(Exception):
    """The service answered the feed with a status other than 200 or 404."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")


def _describe(exc: Exception) -> str:
    """A failure's kind, never its text (a body or URL may carry anything)."""
    return str(exc) if isinstance(exc, _Refused) else type(exc).__name__


async def _handle(
    sse: httpx2.ServerSentEvent,
    last: int | None,
    on_change: Callable[[Perubahan], Awaitable[None]],
    on_reset: Callable[[], Awaitable[None]],
) -> int | None:
    """Act on one frame; the id to resume after."""
    if sse.event == "perubahan":
        change = Perubahan.model_validate_json(sse.data)
        if last is None or change.id > last:
            await on_change(change)
        return change.id
    if sse.event == "mulai":  # a resumed stream sends the backlog after it: keep resuming from where we were
        head = Posisi.model_validate_json(sse.data).id
        return head if last is None else last
    if sse.event == "reset":
        log.warning("change feed lost events (pruned before they were read): refreshing every subscription")
        await on_reset()
        return Posisi.model_validate_json(sse.data).id
    return last  # a ping or an event kind this version does not know
