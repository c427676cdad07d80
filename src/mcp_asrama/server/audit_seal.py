"""Sealing audit lines, and opening them again.

`hash` seals a line (SHA-256 of its compact JSON without the `hash` field, so an edit of any line, the last
included, shows); `prev` is the previous line's `hash` (`GENESIS` for the first). `verify` names the first line
that was edited, deleted, inserted, reordered or torn. A keyless chain shows naive tampering, not a rewrite of the
whole tail, nor lines cut from the end: write down the head hash `verify` prints (a paper trail).
"""

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

GENESIS = hashlib.sha256(b"mcp-asrama audit log v1").hexdigest()
_SEAL = re.compile(rb',"hash":"([0-9a-f]{64})"\}\Z')


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
