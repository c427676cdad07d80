"""Sealing audit lines, and opening them again; the school's key (ASRAMA_AUDIT_KEY).

A line's last member is its seal: `"hash"`, the SHA-256 of the line's compact JSON without the seal, or, with the
key, `"hmac"`, HMAC-SHA256 under the key of the same bytes. An edit of any line, the last included, shows; `prev`
is the previous line's seal (`GENESIS` for the first), so a deletion, an insertion or a reordering shows too.
Without a key anyone can re-chain a rewritten history from genesis, cut the tail or append a correctly chained
line: only a head kept elsewhere shows that (`audit verify --expect-head`, `--since`). With the key nobody without
it can write a line that verifies. A log is sealed one way only: `verify` given a key refuses an unkeyed line, and
without a key it cannot check (and so refuses) a keyed one.
"""

import hashlib
import hmac
import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from mcp_asrama.server.guard.audit_file import last_lines

GENESIS = hashlib.sha256(b"mcp-asrama audit log v1").hexdigest()
HASH, HMAC = "hash", "hmac"
MIN_KEY_BYTES = 32
NEEDS_KEY = "sealed with a key (HMAC): its seal cannot be checked without it; give --key FILE or set ASRAMA_AUDIT_KEY"
UNKEYED = (
    "sealed without the key (plain SHA-256) where the key was given: forged without the key, or an unkeyed log "
    "(verify that without --key)"
)
_SEAL = re.compile(rb',"(hash|hmac)":"([0-9a-f]{64})"\}\Z')


class AuditConfigError(ValueError):
    """The audit settings cannot work: an unusable key file, or a log sealed otherwise than configured."""


def load_key(path: Path) -> bytes:
    """The secret in `path` (one trailing newline dropped): at least 32 bytes, in a file only its owner may open."""
    where = f"ASRAMA_AUDIT_KEY {path}"
    try:
        mode = path.stat().st_mode
        key = path.read_bytes().removesuffix(b"\n").removesuffix(b"\r")
    except OSError as exc:
        raise AuditConfigError(f"{where} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if sys.platform != "win32" and mode & 0o077:
        raise AuditConfigError(f"{where} is accessible to group or others (mode {oct(mode & 0o777)}): chmod 600 it")
    if len(key) < MIN_KEY_BYTES:
        raise AuditConfigError(
            f"{where} holds {len(key)} bytes; at least {MIN_KEY_BYTES} are needed (e.g. openssl rand -hex 32)"
        )
    return key


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _digest(body: bytes, key: bytes | None) -> str:
    return sha256_hex(body) if key is None else hmac.new(key, body, hashlib.sha256).hexdigest()


def seal(entry: Mapping[str, Any], key: bytes | None = None) -> tuple[bytes, str]:
    """The line for `entry` (without newline) and its seal: compact JSON, then `"hash"` (or `"hmac"`) last."""
    body = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()
    digest = _digest(body, key)
    member = HASH if key is None else HMAC
    return body[:-1] + f',"{member}":"{digest}"}}'.encode(), digest


def seal_kind(raw: bytes) -> str | None:
    """`hash` or `hmac`: how a line says it is sealed (whether or not the seal holds)."""
    match = _SEAL.search(raw)
    return match.group(1).decode() if match else None


class Opened(NamedTuple):
    """A line opened: its entry and seal when the seal holds, else None and why not."""

    entry: dict[str, Any] | None
    digest: str
    problem: str


def unseal(raw: bytes, key: bytes | None = None) -> Opened:
    """Open one line sealed as a log with (or without) `key` must be."""
    match = _SEAL.search(raw)
    try:
        entry = json.loads(raw)
    except ValueError:
        return Opened(None, "", "not valid JSON (edited, inserted or corrupted)")
    if match is None or not isinstance(entry, dict):
        return Opened(None, "", "not an audit entry: no hash at its end (edited or inserted by hand)")
    keyed, digest = match.group(1) == HMAC.encode(), match.group(2).decode()
    if keyed != (key is not None):
        return Opened(None, "", NEEDS_KEY if keyed else UNKEYED)
    if not hmac.compare_digest(_digest(raw[: match.start()] + b"}", key), digest):
        if keyed:
            return Opened(None, "", "does not match its HMAC: edited, or sealed with another key")
        return Opened(None, "", "edited: its content does not match its hash")
    return Opened(entry, digest, "")


def refuse_mixing(path: Path, key: bytes | None) -> None:
    """At start: refuse (AuditConfigError) the log at `path` whose tail is sealed otherwise than `key` seals."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return  # none yet (or unreadable: the first write reports it, and data fails closed)
    try:
        size = os.fstat(fd).st_size
        sealed = [raw for _, raw, whole in last_lines(fd, size) if whole and seal_kind(raw)] if size else []
    finally:
        os.close(fd)
    if not sealed:
        return
    where = f"ASRAMA_AUDIT_LOG {path}"
    fresh = f"Start a new file: move {path} aside (keep its head: mcp-asrama audit verify {path}), then start again"
    keyed = seal_kind(sealed[-1]) == HMAC
    if keyed != (key is not None):
        raise AuditConfigError(
            f"{where} holds entries sealed {'with' if keyed else 'without'} a key, but ASRAMA_AUDIT_KEY is "
            f"{'not ' if keyed else ''}set: a log never mixes both. {fresh}"
        )
    if key is not None and all(unseal(raw, key).entry is None for raw in sealed):
        # (One edited line among them would not stop us: `audit verify` names it, as without a key.)
        raise AuditConfigError(f"{where}: its last entries do not match ASRAMA_AUDIT_KEY: another key? {fresh}")
