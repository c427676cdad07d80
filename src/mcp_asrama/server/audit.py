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
`arguments` (search terms, each value cut short), `outcome` (`ok`, `tool_error`, `error` with `code`,
`cancelled`), `latency_ms`, and `disclosed`: the ids of the students whose data went out, read from the
result (`id`/`id_anak` anywhere in a tool's structuredContent or JSON text, in a resource's JSON text). Never
the data itself. The file holds search terms (possibly a child's name): keep it like the data (created 0600).

The chain: `hash` seals a line (SHA-256 of its compact JSON without the `hash` field, so an edit of any line,
the last included, shows); `prev` is the previous line's `hash` (`GENESIS` for the first). `verify` names the
first line that was edited, deleted, inserted, reordered or torn. A keyless chain shows naive tampering, not a
rewrite of the whole tail, nor lines cut from the end: write down the head hash `verify` prints (a paper trail).

Writing: one `write` per line on an `O_APPEND` file, then `fsync`, before the answer leaves; lines are
serialized by a lock in the process and by `flock` between processes (POSIX; on Windows assume one writer),
and a writer that finds the file grown, shrunk or replaced (rotation) re-reads the tail before chaining. A
line cut short by a crash (no newline at the end) is never chained over silently: the next writer ends it and
writes a `torn_tail` entry chained to the torn bytes' SHA-256, which `verify` reports by line number. After a
write, the free space of the file's folder is checked (at most once a minute): below 512 MiB or 5 % a warning
goes to stderr, once per check; the check never delays or refuses a request.

If the log cannot be written, requests that may carry children's data (the disclosing methods above, or any
result that disclosed an id) fail closed — a tool error, or JSON-RPC `-32603`, nothing disclosed — and the cause
goes to stderr: a school must be able to account for every disclosure. Other audited requests (unknown methods)
fail open, logged to stderr too.
"""

import hashlib
import json
import logging
import math
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel, ValidationError

from mcp_asrama.server.access import LOCAL_SUBJECT
from mcp_asrama.server.settings import ServerSettings

log = logging.getLogger(__name__)

GENESIS = hashlib.sha256(b"mcp-asrama audit log v1").hexdigest()
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
UNAUDITED = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "logging/setLevel",
    }
)
ID_KEYS = frozenset({"id", "id_anak"})
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
WITHHELD = (
    "Permintaan ini tidak dapat dicatat di log audit, jadi datanya tidak dikirim. "
    "Beri tahu admin sekolah: log audit server MCP tidak dapat ditulis."
)
_SEAL = re.compile(rb',"hash":"([0-9a-f]{64})"\}\Z')
_MAX_TEXT, _MAX_KEYS, _MAX_ID, _MAX_TAIL = 200, 16, 64, 16 * 1024 * 1024
LOW_SPACE = "audit log's disk is nearly full: free space before the log stops every data request"

if sys.platform == "win32":  # pragma: no cover - no flock: one writer process per file

    def _flock(fd: int) -> None:
        pass

else:
    import fcntl

    def _flock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor is closed


def audited(method: str) -> bool:
    """Whether a request of `method` gets a line (see the module docstring)."""
    return method not in UNAUDITED


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def seal(entry: Mapping[str, Any]) -> tuple[bytes, str]:
    """The line for `entry` (without newline) and its hash: compact JSON, then `"hash"` as the last member."""
    body = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()
    digest = sha256_hex(body)
    return body[:-1] + b',"hash":"' + digest.encode() + b'"}', digest


def unseal(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The entry of a line whose seal holds, else None and why not."""
    match = _SEAL.search(raw)
    try:
        entry = json.loads(raw)
    except ValueError:
        return None, "not valid JSON (edited, inserted or corrupted)"
    if match is None or not isinstance(entry, dict):
        return None, "not an audit entry: no hash at its end (edited or inserted by hand)"
    if sha256_hex(raw[: match.start()] + b"}") != match.group(1).decode():
        return None, "edited: its content does not match its hash"
    return entry, ""


def _clean(text: str, limit: int = _MAX_TEXT) -> str:
    """Caller-chosen text, bounded and encodable (a lone surrogate would make the line unwritable)."""
    text = text.encode("utf-8", "replace").decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded(value: Any) -> Any:
    """A search term as sent, cut short; nested values become short JSON text."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 10**18):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str):
        return _clean(value)
    return _clean(json.dumps(value, ensure_ascii=False, default=str))


def bounded_arguments(arguments: Any) -> Any:
    """Tool/prompt arguments for the log: at most 16 names, each value at most 200 characters."""
    if arguments is None:
        return None
    if not isinstance(arguments, Mapping):
        return _bounded(arguments)
    items = list(arguments.items())
    kept = {_clean(str(k), 64): _bounded(v) for k, v in items[:_MAX_KEYS]}
    if len(items) > _MAX_KEYS:
        kept["…"] = f"+{len(items) - _MAX_KEYS} more"
    return kept


def _texts(blocks: Any) -> Iterator[str]:
    """The text of content blocks, embedded resources included."""
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, Mapping):
            inner = block.get("resource") if block.get("type") == "resource" else block
            if isinstance(inner, Mapping) and isinstance(inner.get("text"), str):
                yield inner["text"]


def disclosed_ids(method: str, result: Mapping[str, Any]) -> list[str]:
    """The student ids a result carries: `id`/`id_anak` anywhere in its structured or JSON text content."""
    sources: list[Any] = []
    if method == "tools/call":
        sources.append(result.get("structuredContent"))
        texts = list(_texts(result.get("content")))
    elif method == "resources/read":
        texts = list(_texts(result.get("contents")))
    elif method == "prompts/get":
        messages = result.get("messages")
        contents = [m.get("content") for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
        texts = list(_texts(contents))
    else:
        return []
    for text in texts:
        try:
            sources.append(json.loads(text))
        except ValueError:
            continue  # prose (an error message naming an id discloses nothing)
    found: dict[str, None] = {}
    stack = sources
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, value in node.items():
                if key in ID_KEYS and isinstance(value, str):
                    found[value[:_MAX_ID]] = None
                elif isinstance(value, Mapping | list):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return sorted(found)


def _read_at(fd: int, offset: int, size: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _last_lines(fd: int, size: int, want: int = 2) -> list[tuple[int, bytes, bool]]:
    """Up to `want` last lines as (offset, bytes, ends with a newline), oldest first, read backwards."""
    buffer, start = b"", size
    while start > 0 and buffer.count(b"\n", 0, max(len(buffer) - 1, 0)) < want and size - start < _MAX_TAIL:
        step = min(64 * 1024, start)
        start -= step
        buffer = _read_at(fd, start, step) + buffer
    terminated = buffer.endswith(b"\n")
    parts = (buffer[:-1] if terminated else buffer).split(b"\n")
    lines, position = [], start
    for part in parts:
        lines.append((position, part, True))
        position += len(part) + 1
    lines = lines[1:] if start > 0 else lines  # the first begins mid-line
    if lines:
        lines[-1] = (*lines[-1][:2], terminated)
    return lines[-want:]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class FreeSpace:
    """Warns when the audit file's file system runs low: below `min_bytes` or `min_ratio` of its size free.

    Checked at most once every `every` seconds (so it warns at most once per interval); never raises.
    """

    min_bytes: int = 512 * 1024 * 1024
    min_ratio: float = 0.05
    every: float = 60.0
    _due: float = float("-inf")

    def check(self, path: Path) -> None:
        now = time.monotonic()
        if now < self._due:
            return
        self._due = now + self.every
        try:
            usage = shutil.disk_usage(path.parent)
        except OSError:
            return  # a missing folder: the write itself reports it
        if usage.free < self.min_bytes or usage.free < usage.total * self.min_ratio:
            percent = round(100 * usage.free / usage.total, 1) if usage.total else 0.0
            log.warning(LOW_SPACE, extra={"path": str(path), "free_bytes": usage.free, "free_percent": percent})


class AuditLog:
    """The append-only, hash-chained file. `append` blocks (write + fsync): call it from a worker thread."""

    def __init__(self, path: Path, space: FreeSpace | None = None) -> None:
        self.path = path
        self.space = space or FreeSpace()
        self._lock = threading.Lock()
        self._known: tuple[int, int, int] | None = None  # (device, inode, size) after our last write
        self._prev, self._seq = GENESIS, 0

    def append(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Chain and write one entry; returns it with `seq`, `prev` and `hash`. Raises OSError on failure."""
        with self._lock:
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
            fd = os.open(self.path, flags, 0o600)
            try:
                _flock(fd)
                stat = os.fstat(fd)
                if (stat.st_dev, stat.st_ino, stat.st_size) != self._known:
                    self._resync(fd, stat)
                return self._write(fd, {"seq": self._seq + 1, **fields})
            except BaseException:
                self._known = None
                raise
            finally:
                os.close(fd)
                self.space.check(self.path)

    def _write(self, fd: int, fields: Mapping[str, Any], prefix: bytes = b"") -> dict[str, Any]:
        entry = {**fields, "prev": self._prev}
        line, digest = seal(entry)
        data = prefix + line + b"\n"
        if os.write(fd, data) != len(data):
            raise OSError("short write to the audit log")
        os.fsync(fd)
        stat = os.fstat(fd)
        self._known = (stat.st_dev, stat.st_ino, stat.st_size)
        self._prev, self._seq = digest, int(entry["seq"])
        return {**entry, "hash": digest}

    def _resync(self, fd: int, stat: os.stat_result) -> None:
        """Continue the chain from the file's last line (another writer, a restart, a rotation)."""
        if self._known is not None and self._known[:2] == (stat.st_dev, stat.st_ino) and stat.st_size < self._known[2]:
            log.warning("audit log shrank since our last write", extra={"path": str(self.path)})
        self._prev, self._seq = GENESIS, 0
        lines = _last_lines(fd, stat.st_size) if stat.st_size else []
        entries = [unseal(raw)[0] if raw else None for _, raw, _ in lines]
        for entry in entries:
            if entry is not None and isinstance(entry.get("seq"), int):
                self._seq = entry["seq"]
        if not lines:
            return
        (offset, raw, terminated), last_entry = lines[-1], entries[-1]
        if not terminated:
            log.warning("audit log ends mid-line (interrupted write): marking it", extra={"path": str(self.path)})
            self._prev = sha256_hex(raw)
            torn = {"offset": offset, "bytes": len(raw), "sha256": self._prev}
            self._write(fd, {"seq": self._seq + 1, "time": _now(), "event": "torn_tail", "torn": torn}, b"\n")
        elif last_entry is None:
            log.error("audit log's last line is not a valid entry; `audit verify` will name it")
            self._prev = sha256_hex(raw)
        else:
            self._prev = str(last_entry["hash"])


def _who() -> dict[str, Any]:
    """`subject` (token subject, else `local`), and the token's OAuth client when there is a token."""
    token = get_access_token()
    if token is None:
        return {"subject": LOCAL_SUBJECT}
    return {"subject": _clean(token.subject or token.client_id, 256), "oauth_client": _clean(token.client_id, 256)}


def _client(ctx: ServerRequestContext[Any, Any], params: Mapping[str, Any]) -> str | None:
    """The host's clientInfo name: from this request (initialize, or 2026-07-28 `_meta`), else the connection's."""
    meta = params.get("_meta")
    offered = [params.get("clientInfo") if ctx.method == "initialize" else None]
    offered.append(meta.get(CLIENT_INFO) if isinstance(meta, Mapping) else None)
    for info in offered:
        if isinstance(info, Mapping) and isinstance(info.get("name"), str):
            return _clean(info["name"], 128)
    known = ctx.session.client_params
    return _clean(known.client_info.name, 128) if known is not None else None


def _describe(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    params = ctx.params if isinstance(ctx.params, Mapping) else {}
    named = ctx.method in ("tools/call", "prompts/get")
    target = params.get("name") if named else params.get("uri")
    return {
        "time": _now(),
        "event": "request",
        **_who(),
        "client": _client(ctx, params),
        "method": _clean(ctx.method, 128),
        "target": _clean(target, 256) if isinstance(target, str) else None,
        "arguments": bounded_arguments(params.get("arguments")) if named else None,
    }


def _withheld(method: str, result: Mapping[str, Any]) -> dict[str, Any]:
    if method != "tools/call":
        raise MCPError(code=INTERNAL_ERROR, message=WITHHELD)
    kept = {k: v for k, v in result.items() if k not in ("content", "structuredContent", "isError")}
    return {**kept, "content": [{"type": "text", "text": WITHHELD}], "isError": True}


class Auditor:
    """The MCP middleware: times each request, reads what it disclosed, and writes its line before answering."""

    def __init__(self, path: Path) -> None:
        self.log = AuditLog(path)

    async def _record(self, fields: dict[str, Any]) -> bool:
        try:
            await anyio.to_thread.run_sync(self.log.append, fields)
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

        try:
            result = await call_next(ctx)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._record(done("cancelled", disclosed=[]))
            raise
        except Exception as exc:
            code = exc.error.code if isinstance(exc, MCPError) else INTERNAL_ERROR
            code = INVALID_PARAMS if isinstance(exc, ValidationError) else code
            await self._record(done("error", code=code, disclosed=[]))
            raise
        wire: Any = result.model_dump(mode="json", by_alias=True) if isinstance(result, BaseModel) else result
        wire = wire if isinstance(wire, Mapping) else {}
        disclosed = disclosed_ids(ctx.method, wire)
        outcome = "tool_error" if ctx.method == "tools/call" and wire.get("isError") is True else "ok"
        if await self._record(done(outcome, disclosed=disclosed)):
            return result
        if ctx.method in DISCLOSING or disclosed:
            return _withheld(ctx.method, wire)
        return result


def middleware(settings: ServerSettings) -> list[ServerMiddleware[Any]]:
    """The MCP middleware that records each request (none while ASRAMA_AUDIT_LOG is unset)."""
    return [] if settings.audit_log is None else [Auditor(settings.audit_log)]
