"""Progress of a long read as `notifications/progress`, one step per request to the data service.

A read that walks pages or units (a scoped search, the records of a range, one request per room or class in scope,
a range rekap) counts its upstream requests: progress is the requests done, total the requests known to be needed
so far (a first page tells how many follow). A step is reported only when the next request starts, and `done`
reports the last, so the values only increase and the last report is n of n. Messages are Indonesian and carry
counts only. The SDK sends nothing when the request has no progress token (and over HTTP only in SSE mode).
"""

from typing import Any

from mcp.server.mcpserver import Context


class UpstreamProgress:
    """The upstream requests of one MCP request; without a Context (or a progress token) nothing is sent."""

    def __init__(self, ctx: Context[Any, Any] | None = None) -> None:
        self._ctx = ctx
        self._started = 0  # upstream requests begun
        self._reported = 0  # the last progress value sent
        self._total = 0  # upstream requests known to be needed

    def expect(self, requests: int) -> None:
        """`requests` more upstream requests are known to be needed."""
        self._total += max(requests, 0)

    async def step(self) -> None:
        """Call before each upstream request: the one before it is reported done. Counted before the report is
        sent, so that concurrent requests each get their own value."""
        self._started += 1
        if self._started - 1 > self._reported:
            await self._report(self._started - 1, max(self._total, self._started))

    async def done(self) -> None:
        """The walk is over: the last request is reported, and the total is what it took."""
        if self._started > self._reported:
            self._total = self._started
            await self._report(self._started, self._started)

    async def _report(self, progress: int, total: int) -> None:
        self._reported = progress
        if self._ctx is not None:
            await self._ctx.report_progress(progress, total, f"halaman {progress} dari {total}")


def pages_left(total: int, fetched: int, page: int) -> int:
    """Upstream pages still needed after the first `fetched` of `total` rows, `page` rows at a time."""
    return max(0, -(-(total - fetched) // page))
