"""Disclosure audit (UU PDP No. 27/2022): one hash-chained JSON line per MCP request, kept by the school.

With `ASRAMA_AUDIT_LOG` set, every request that can disclose or change children's data gets one line, in both
protocol eras and on every transport: `tools/call`, `resources/read`, `prompts/get`, `completion/complete`,
`subscriptions/listen`, `resources/subscribe`, and any method we do not know. What cannot disclose data —
the handshake (`initialize`, `server/discover`), `ping`, the definition lists (`tools/list`, `prompts/list`,
`resources/list`, `resources/templates/list`), `logging/setLevel` and notifications — is kept out of the chain,
neither chained nor counted: those are never rate-limited, and a flood of them must not fill the disk (and a full
disk shuts off all data, fail closed). Every audited method costs a rate-limit token on HTTP, so a token's share of
the log is bounded by its rate.

A line holds `seq`, `time` (UTC), `subject` (the access token's subject, with its `oauth_client`; `local` on
stdio or without auth), `client` (the host's self-declared clientInfo name; unknown for a handshake-era host on
stateless HTTP, where every POST is a new connection), `method`, `target` (tool or prompt name, resource URI),
`arguments` (search terms, each value cut short; never a note or reason written into a record), `outcome` (`ok`,
`tool_error`, `error` with `code`, `cancelled`), `latency_ms`, and `disclosed`: the ids of the students whose
data went out (never the data itself). A successful answer discloses
- the ids it carries: `id`/`id_anak` anywhere in a tool's structuredContent or JSON text, in a resource's JSON text;
- the student it names: an `id_anak` argument of a tool or prompt, an `asrama://anak/{id}` resource or one under it;
- the students its handler declared with `disclose`: each student of an aggregate over fewer than `SMALL_GROUP`
  (5) visible students (`disclose_aggregate`), since counts over one or two children are their data, and each
  student a write's confirmation question names (the question goes out whatever the answer).
An answer that carried health details of clinic visits (declared with `disclose_health`) also gets
`"kesehatan": true`, and so does one that carried counts derived from them (`disclose_health_aggregate`), with
`"kelompok"`: the group counted; so that the school can list every health disclosure.
A failed request (an error, a tool error, a cancellation) discloses no one. The file holds search terms (possibly
a child's name): keep it like the data (created 0600).

A call of a write tool (one not annotated read-only: `writes`, from the server) also gets `write`: `confirmation` —
`asked` (the question went to the person), `proposed` (an usulan waits for the person's decision on the view or the
page), `accepted`, `declined`, `cancelled`, `expired` (an usulan decided too late), `changed` (the data changed
before the write: nothing written), `replayed` (a confirmation or an usulan used again: refused), `unchanged`
(nothing to write, nobody asked), `failed` (accepted, but the service did not write) or `refused` (not allowed,
invalid, wrong key, or no way to ask) — `channel` (`formulir`, `tampilan`, `halaman`) where known, and `changes`:
each student changed, as `id`, `old` and `new` status (and the `izin` handle), ids and statuses only. `who_changed`
reads them back.

The file is written by `audit_log` (append-only, fsync'd, each line sealed — SHA-256, or HMAC-SHA256 under the
school's key, `ASRAMA_AUDIT_KEY` — and chained to the one before: see `audit_seal`) and read back by
`audit_check` (`verify` with its anchors, `who_saw`). A key file shorter than 32 bytes or open to group or others,
or a log sealed otherwise than configured (keyed vs unkeyed, another key), is refused when the server starts.

A decision on the browser page (`ASRAMA_KONFIRMASI=halaman`) is no MCP request: `Auditor.event` writes its line
through the same chain, `"event": "page"`, `method` `usulan/halaman`, `target` the write tool, `subject` `local`,
`outcome` `ok` or `refused`, and the same `write` (channel `halaman`); never the page's secret.

If the log cannot be written, requests that may carry children's data (the disclosing methods above, or any
result that disclosed an id) fail closed — a tool error, or JSON-RPC `-32603`, nothing disclosed — and the cause
goes to stderr: a school must be able to account for every disclosure. Other audited requests (unknown methods)
fail open, logged to stderr too.
"""

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel, ValidationError

from mcp_asrama.server.guard.access import LOCAL_SUBJECT
from mcp_asrama.server.guard.audit_fields import (
    MAX_ID,
    bounded,
    bounded_arguments,
    clean,
    disclosed_ids,
    named_students,
    without_written_text,
)
from mcp_asrama.server.guard.audit_log import AuditLog, utc_now
from mcp_asrama.server.guard.audit_seal import AuditConfigError, load_key, refuse_mixing
from mcp_asrama.server.method_kinds import NO_DATA_METHODS
from mcp_asrama.server.settings import ServerSettings

log = logging.getLogger(__name__)

# What can disclose (or, later, change) children's data: audited, and refused when its line cannot be written.
DISCLOSING = frozenset(
    {
        "tools/call",
        "resources/read",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
        "resources/subscribe",
    }
)
# What cannot: never in the chain. Any method in neither set (one we do not know) is audited.
UNAUDITED = NO_DATA_METHODS | {"logging/setLevel"}
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
WITHHELD = (
    "Permintaan ini tidak dapat dicatat di log audit, jadi datanya tidak dikirim. "
    "Beri tahu admin sekolah: log audit server MCP tidak dapat ditulis."
)
SMALL_GROUP = 5
# The ids the handler in progress declared, and what its write did; the Auditor sets fresh ones around each request.
_declared: ContextVar[set[str] | None] = ContextVar("asrama_audit_declared", default=None)
_written: ContextVar[dict[str, Any] | None] = ContextVar("asrama_audit_written", default=None)
# Health disclosures of the request: True for details of visits, a group (a mapping) for counts derived from them.
_health: ContextVar[list[Any] | None] = ContextVar("asrama_audit_health", default=None)


@contextlib.contextmanager
def _declaring(declared: set[str], written: dict[str, Any], health: list[Any]) -> Iterator[None]:
    """Within: what the code in progress declares (`disclose`, `note_write`, the health disclosures) goes to these."""
    tokens = _declared.set(declared), _written.set(written), _health.set(health)
    try:
        yield
    finally:
        _declared.reset(tokens[0])
        _written.reset(tokens[1])
        _health.reset(tokens[2])


def audited(method: str) -> bool:
    """Whether a request of `method` gets a line (see the module docstring)."""
    return method not in UNAUDITED


def disclose(ids: Iterable[str]) -> None:
    """Declare that the answer in progress carries these students' data (recorded if it succeeds).

    The set lives in the request's context; the SDK runs a sync handler in a worker thread with a copy of that
    context, which holds the same set. Outside an audited request this does nothing.
    """
    declared = _declared.get()
    if declared is not None:
        declared.update(i[:MAX_ID] for i in ids)


def disclose_health(ids: Iterable[str]) -> None:
    """Like `disclose`, for health details (clinic visits: specific personal data under UU PDP): the line gets
    `"kesehatan": true`. Outside an audited request this does nothing."""
    disclose(ids)
    flag = _health.get()
    if flag is not None:
        flag.append(True)


def disclose_health_aggregate(group: Mapping[str, Any]) -> None:
    """Declare that the answer in progress carries counts derived from clinic visits of `group` (`kelas`, `kamar`,
    or `sekolah`): the line gets `"kesehatan": true` and `"kelompok"`, ids or not. Outside an audited request this
    does nothing."""
    flag = _health.get()
    if flag is not None:
        flag.append({k: bounded(v) for k, v in group.items() if v is not None})


def disclose_aggregate(count: int, ids: Iterable[str]) -> None:
    """An aggregate over `count` visible students, `ids` theirs: under `SMALL_GROUP` each of them is disclosed."""
    if count < SMALL_GROUP:
        disclose(ids)


def note_write(
    confirmation: str, changes: Iterable[Mapping[str, str | None]] = (), *, saluran: str | None = None
) -> None:
    """Declare how the write in progress was confirmed (and on which channel: `formulir`, `tampilan`, `halaman`)
    and which students it changed (`id`, `old`, `new`, maybe `izin`): ids, statuses and handles only. Outside an
    audited request this does nothing."""
    written = _written.get()
    if written is not None:
        written["confirmation"] = confirmation
        written["changes"] = [{k: v[:MAX_ID] if isinstance(v, str) else v for k, v in c.items()} for c in changes]
        if saluran is not None:
            written["channel"] = saluran


def _write_fields(writes: bool, outcome: str, written: dict[str, Any]) -> dict[str, Any]:
    """The `write` field of a write tool's line: what its handler declared, else `refused` (it never got to ask)."""
    if not writes and not written:  # a read may note a write's end too (cek_usulan: expired)
        return {}
    confirmation = written.get("confirmation") or ("refused" if outcome != "ok" else "asked")
    channel = {"channel": written["channel"]} if "channel" in written else {}
    return {"write": {"confirmation": confirmation, "changes": written.get("changes", []), **channel}}


def _wire(result: Any) -> Mapping[str, Any]:
    """A handler's result as it goes out: the SDK hands the middleware its wire dict (a model only from a
    middleware that answered by itself), or {} for anything else."""
    wire = result.model_dump(mode="json", by_alias=True) if isinstance(result, BaseModel) else result
    return wire if isinstance(wire, Mapping) else {}


def _who() -> dict[str, Any]:
    """`subject` (token subject, else `local`), and the token's OAuth client when there is a token."""
    token = get_access_token()
    if token is None:
        return {"subject": LOCAL_SUBJECT}
    return {"subject": clean(token.subject or token.client_id, 256), "oauth_client": clean(token.client_id, 256)}


def _client(ctx: ServerRequestContext[Any, Any], params: Mapping[str, Any]) -> str | None:
    """The host's clientInfo name: from this request (initialize, or 2026-07-28 `_meta`), else the connection's."""
    meta = params.get("_meta")
    offered = [params.get("clientInfo") if ctx.method == "initialize" else None]
    offered.append(meta.get(CLIENT_INFO) if isinstance(meta, Mapping) else None)
    for info in offered:
        if isinstance(info, Mapping) and isinstance(info.get("name"), str):
            return clean(info["name"], 128)
    known = ctx.session.client_params
    return clean(known.client_info.name, 128) if known is not None else None


def _describe(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    named = ctx.method in ("tools/call", "prompts/get")
    target = params.get("name") if named else params.get("uri")
    return {
        "time": utc_now(),
        "event": "request",
        **_who(),
        "client": _client(ctx, params),
        "method": clean(ctx.method, 128),
        "target": clean(target, 256) if isinstance(target, str) else None,
        "arguments": bounded_arguments(without_written_text(params.get("arguments"))) if named else None,
    }


def _health_fields(health: list[Any], disclosed: list[str]) -> dict[str, Any]:
    """`"kesehatan": true` for an answer that carried health details of the students it disclosed, or counts derived
    from clinic visits (with `"kelompok"`: the group counted)."""
    groups = [entry for entry in health if isinstance(entry, Mapping)]
    if groups:
        return {"kesehatan": True, "kelompok": groups[0]}
    return {"kesehatan": True} if health and disclosed else {}


def _withheld(method: str, result: Mapping[str, Any]) -> dict[str, Any]:
    if method != "tools/call":
        raise MCPError(code=INTERNAL_ERROR, message=WITHHELD)
    kept = {k: v for k, v in result.items() if k not in ("content", "structuredContent", "isError")}
    return {**kept, "content": [{"type": "text", "text": WITHHELD}], "isError": True}


class Unrecorded(Exception):
    """An event's line could not be written (its answer is withheld)."""


class Auditor:
    """The MCP middleware: times each audited request, gathers whom it disclosed, writes its line, then answers."""

    def __init__(self, log: AuditLog, writes: Callable[[str], bool]) -> None:
        self.log = log
        self.writes = writes  # whether a tool of that name writes (the server knows, from its annotations)

    def _writes(self, fields: Mapping[str, Any]) -> bool:
        target = fields["target"]
        return fields["method"] == "tools/call" and isinstance(target, str) and self.writes(target)

    async def _record(self, fields: dict[str, Any]) -> bool:
        try:
            await self.log.append_async(fields)
        except Exception as exc:  # whatever it is, the request must not go out unrecorded
            log.error(
                "audit log not written",
                extra={"path": str(self.log.path), "error": type(exc).__name__, "reason": getattr(exc, "strerror", "")},
            )
            return False
        return True

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None or not audited(ctx.method):
            return await call_next(ctx)
        fields = _describe(ctx)
        started = time.perf_counter()

        def done(outcome: str, **more: Any) -> dict[str, Any]:
            latency = round((time.perf_counter() - started) * 1000, 1)
            return {**fields, "outcome": outcome, **more, "latency_ms": latency}

        declared: set[str] = set()
        written: dict[str, Any] = {}
        health: list[Any] = []
        try:
            with _declaring(declared, written, health):  # what the handler declares is gathered
                result = await call_next(ctx)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._record(done("cancelled", disclosed=[], **_write_fields(self._writes(fields), "x", written)))
            raise
        except Exception as exc:
            code = exc.error.code if isinstance(exc, MCPError) else INTERNAL_ERROR
            code = INVALID_PARAMS if isinstance(exc, ValidationError) else code
            write = _write_fields(self._writes(fields), "error", written)
            await self._record(done("error", code=code, disclosed=[], **write))
            raise
        wire = _wire(result)
        outcome = "tool_error" if ctx.method == "tools/call" and wire.get("isError") is True else "ok"
        disclosed: list[str] = []
        if outcome == "ok":
            params = ctx.params if isinstance(ctx.params, Mapping) else {}
            disclosed = sorted({*disclosed_ids(ctx.method, wire), *named_students(ctx.method, params), *declared})
        write = _write_fields(self._writes(fields), outcome, written)
        marked = _health_fields(health, disclosed) if outcome == "ok" else {}
        if await self._record(done(outcome, disclosed=disclosed, **write, **marked)):
            return result
        if ctx.method in DISCLOSING or disclosed:
            return _withheld(ctx.method, wire)
        return result

    @asynccontextmanager
    async def event(self, method: str, subject: str, channel: str) -> AsyncIterator[dict[str, Any]]:
        """One line for a decision that is not an MCP request (the browser page's button), through the same chain:
        the block's code declares with `note_write` and `disclose` as a tool does, and may set the yielded line's
        `target` (the write tool) and `arguments` (ids and the decision, never a secret). Its outcome is `ok`, or
        `refused` when the block raised; a write line always. Raises `Unrecorded` when the line cannot be written
        (after the block: what it did is not lost, its answer is withheld)."""
        line: dict[str, Any] = {"time": utc_now(), "event": "page", "subject": subject, "client": None,
                                "method": method, "target": None, "arguments": None}  # fmt: skip
        started = time.perf_counter()
        declared: set[str] = set()
        written: dict[str, Any] = {}
        health: list[Any] = []
        outcome = "refused"
        try:
            with _declaring(declared, written, health):
                yield line
            outcome = "ok"
        finally:
            disclosed = sorted(declared) if outcome == "ok" else []
            write = {"confirmation": written.get("confirmation", "refused"), "changes": written.get("changes", [])}
            fields = {**line, "outcome": outcome, "disclosed": disclosed}
            fields["write"] = {**write, "channel": written.get("channel", channel)}
            fields |= _health_fields(health, disclosed) if outcome == "ok" else {}
            fields["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
            with anyio.CancelScope(shield=True):
                recorded = await self._record(fields)
        if not recorded:
            raise Unrecorded(WITHHELD)


def middleware(settings: ServerSettings, writes: Callable[[str], bool]) -> list[Auditor]:
    """The MCP middleware that records each audited request (none while ASRAMA_AUDIT_LOG is unset).

    Raises AuditConfigError for an unusable ASRAMA_AUDIT_KEY (or one without ASRAMA_AUDIT_LOG), or a log sealed
    otherwise than configured.
    """
    if settings.audit_log is None:
        if settings.audit_key is not None:
            raise AuditConfigError("ASRAMA_AUDIT_KEY seals the audit log: set ASRAMA_AUDIT_LOG too")
        return []
    writer = AuditLog(settings.audit_log, key=None if settings.audit_key is None else load_key(settings.audit_key))
    refuse_mixing(writer.path, writer.key)
    return [Auditor(writer, writes)]
