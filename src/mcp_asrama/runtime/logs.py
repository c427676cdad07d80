"""Structured logging: one JSON object per line, always on stderr (stdout belongs to the stdio protocol).

No child's name in any line, at any level: requests are logged by route template (`AccessLog`), the MCP SDK's
records by resource URI template (`RedactMcpRecords`), and the loggers that print request URLs or payloads are
kept quiet.
"""

import json
import logging
import math
import re
import sys
import time
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_STANDARD_ATTRS = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",
}


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)  # one encoder, not one per line (json.dumps' way)


class JsonFormatter(logging.Formatter):
    """Formats a record as one compact JSON line; `extra={...}` fields are kept."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD_ATTRS})
        if record.exc_info and record.exc_info[1] is not None:
            entry["exception"] = where_it_failed(record.exc_info[1])
        return _ENCODER.encode(entry)


def where_it_failed(exc: BaseException) -> str:
    """A traceback without exception messages: the types and the frames (file, line, function, code) of the
    exception and its causes. A message may quote data (a pydantic error's `input_value`, a KeyError's key)."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = "".join(traceback.format_list(traceback.extract_tb(current.__traceback__)))
        parts.append(f"{type(current).__module__}.{type(current).__qualname__} (message withheld)\n{frames}")
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "\ncaused by ".join(parts)


# The HTTP clients log every request URL (a search URL holds a child's name); sse_starlette logs each event's
# payload at DEBUG.
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "sse_starlette")
SDK_LOGGER = "mcp"
UNLISTED_URI = "<unlisted uri>"
UNMATCHED_ROUTE = "<unmatched route>"
_URI_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_EXPRESSION = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class UriTemplate:
    """A resource URI or URI template (`asrama://anak/{id_anak}`) and the concrete URIs it stands for."""

    text: str
    names: tuple[str, ...]
    pattern: re.Pattern[str]

    @classmethod
    def of(cls, text: str) -> "UriTemplate":
        literals = (re.escape(part) for part in _EXPRESSION.split(text))
        return cls(text, tuple(_EXPRESSION.findall(text)), re.compile("([^/?#]+)".join(literals)))

    def stand_ins(self, uri: str) -> dict[str, str] | None:
        """What the log shows for `uri` and for each value in it (raw and percent-decoded), or None if not ours."""
        match = self.pattern.fullmatch(uri)
        if match is None:
            return None
        shown = {uri: self.text}
        for name, value in zip(self.names, match.groups(), strict=True):
            shown[value] = shown[unquote(value)] = name
        return shown


class _Verbatim(str):
    """A stand-in that `%r` shows as it is."""

    def __repr__(self) -> str:
        return str(self)


def _scrub(value: object, shown: Mapping[str, str]) -> object:
    """A record argument with every concrete URI and value replaced in one pass; objects (frames, exceptions,
    payloads) by their type's name."""
    if value is None or isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return _Verbatim(f"<{type(value).__name__}>")
    concrete = sorted((key for key in shown if key), key=len, reverse=True)
    if not concrete:
        return value
    return re.sub("|".join(map(re.escape, concrete)), lambda m: shown[m.group()], value)


class RedactMcpRecords(logging.Filter):
    """A handler filter: the MCP SDK's records show resource URIs as their templates and payloads as type names.

    The SDK logs a failed read at INFO (`Resource 'asrama://anak/Prayoga Lestari' failed: 'Unknown resource: …'`),
    every lookup's URI in an `uri` field at DEBUG, and frames and exceptions with `%r` at DEBUG. A URI none of
    `templates` matches shows as a placeholder: naming the templates (`name_uri_templates`) is for readability only.
    """

    def __init__(self) -> None:
        super().__init__()
        self.templates: tuple[UriTemplate, ...] = ()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != SDK_LOGGER and not record.name.startswith(SDK_LOGGER + "."):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        uri = record.__dict__.get("uri")
        shown: dict[str, str] = {}
        for value in (*args, uri):
            if isinstance(value, str) and _URI_START.match(value):
                shown.update(self._stand_ins(value))
        if isinstance(uri, str):
            record.__dict__["uri"] = _scrub(uri, shown)
        if args:
            record.args = tuple(_scrub(arg, shown) for arg in args)
        return True

    def _stand_ins(self, uri: str) -> dict[str, str]:
        for template in self.templates:
            shown = template.stand_ins(uri)
            if shown is not None:
                return shown
        return {uri: UNLISTED_URI}


def name_uri_templates(uris: Iterable[str]) -> None:
    """Let the MCP SDK's records show these resource URIs and URI templates (any other URI shows as a placeholder)."""
    templates = tuple(UriTemplate.of(uri) for uri in uris)
    for handler in logging.getLogger().handlers:
        for found in handler.filters:
            if isinstance(found, RedactMcpRecords):
                found.templates = templates


access_log = logging.getLogger("mcp_asrama.access")
# Answers of the doors (no token, wrong Origin, oversize, wrong Host, rate limited, too many connections): a flood
# of them is counted, not logged line by line.
REFUSALS = frozenset({401, 403, 413, 421, 429, 503})
# Set in the ASGI scope by an app that answers a routine request (the MCP server's `tools/list`, `ping`, a
# notification: no data, and a client may send them at any rate): counted like refusals, not a line each.
ROUTINE = "mcp_asrama.access.routine"


class RefusalTally:
    """Requests counted per (method, route, status); one line per `interval` seconds (the first at once)."""

    def __init__(self, interval: float = 10.0, message: str = "requests refused", field: str = "refused") -> None:
        self.interval = interval
        self.message = message
        self.field = field
        self._counts: dict[tuple[str, str, int], int] = {}
        self._written_at = -math.inf

    def count(self, method: str, route: str, status: int) -> None:
        key = (method, route, status)
        self._counts[key] = self._counts.get(key, 0) + 1
        now = time.monotonic()
        if now - self._written_at >= self.interval:
            counted = [{"method": m, "route": r, "status": st, "count": n} for (m, r, st), n in self._counts.items()]
            access_log.info(self.message, extra={self.field: counted, "interval_s": self.interval})
            self._counts.clear()
            self._written_at = now


class AccessLog:
    """Pure ASGI middleware: one line per HTTP request once it is answered (method, route template, status,
    duration), never the path's values or a query string; refusals (`REFUSALS`) and routine requests (`ROUTINE`)
    counted, one line per interval each.

    uvicorn's access line holds the raw path (`/anak/PrayogaLestari`); Starlette and FastAPI leave the matched route
    in `scope["route"]`, whose `path` is the template (`/anak/{id_anak}`). Without a route: the path if it is one
    of `plain_paths` (answered before any router, and holding no values), else a placeholder.
    """

    def __init__(self, app: ASGIApp, plain_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.plain_paths = frozenset(plain_paths)
        self.refusals = RefusalTally()
        self.routine = RefusalTally(message="routine requests", field="routine")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, sending)
        except Exception:
            status = status or 500
            raise
        finally:
            self._log(scope, status, time.perf_counter() - started)

    def _log(self, scope: Scope, status: int, seconds: float) -> None:
        route = self.route(scope)
        if status in REFUSALS:
            self.refusals.count(scope["method"], route, status)
            return
        if scope.get(ROUTINE) and 200 <= status < 300:
            self.routine.count(scope["method"], route, status)
            return
        access_log.info(
            "%s %s %s",
            scope["method"],
            route,
            status or "-",
            extra={
                "method": scope["method"],
                "route": route,
                "status": status or None,
                "duration_ms": round(seconds * 1000, 1),
            },
        )

    def route(self, scope: Scope) -> str:
        """The matched route's template, a plain path, or the placeholder."""
        template = route_template(scope)
        if template == UNMATCHED_ROUTE and scope["path"] in self.plain_paths:
            return str(scope["path"])
        return template


def route_template(scope: Scope) -> str:
    """The template of the route that matched the request (`/anak/{id_anak}`), else a placeholder: what a log may
    say of a path."""
    template = getattr(scope.get("route"), "path", None)
    return template if isinstance(template, str) else UNMATCHED_ROUTE


ONCE_PER_PROCESS = ("uvicorn.error", "mcp.server.streamable_http_manager")


class OncePerProcess(logging.Filter):
    """A handler filter: each INFO line of uvicorn's and the SDK's session manager's starting and stopping is said
    once per process. The demo runs two uvicorn servers (the MCP server's with two session managers, one per
    response mode), each of which would say `Started server process [pid]` and the rest again."""

    def __init__(self) -> None:
        super().__init__()
        self._said: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.INFO or record.name not in ONCE_PER_PROCESS:
            return True
        line = (record.name, str(record.msg))
        if line in self._said:
            return False
        self._said.add(line)
        return True


def configure_logging(level: str = "INFO") -> None:
    """Send every logger (uvicorn's included) to stderr as JSON lines, without children's names."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RedactMcpRecords())
    handler.addFilter(OncePerProcess())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # What a record would look up for fields no line of ours shows (thread, process): ~3 of ~17 µs per access line.
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    # uvicorn's access line holds the raw path: AccessLog logs requests by route template instead.
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    access.propagate = False
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
