"""Reading the disclosure audit: `verify` the hash chain, and `who_saw` a student's data (see `audit`)."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcp_asrama.server.audit_seal import GENESIS, sha256_hex, unseal


def _lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    with path.open("rb") as file:
        for number, chunk in enumerate(file, 1):
            terminated = chunk.endswith(b"\n")
            yield number, chunk[:-1] if terminated else chunk, terminated


def _chain_break(number: int, expected: int, seq: Any) -> str:
    where = "the genesis value" if number == 1 else f"the hash of line {number - 1}"
    if not isinstance(seq, int) or seq == expected:
        hint = "the line before it is not the original (replaced or inserted?)"
    elif seq > expected:
        hint = f"entry #{expected} is missing here (deleted, or lines reordered?)"
    else:
        hint = f"entry #{seq} appears again or out of order (reordered or duplicated?)"
    return f"line {number}: the chain breaks: its prev is not {where}; expected entry #{expected}, found #{seq}: {hint}"


def verify(path: Path) -> tuple[bool, str]:
    """Check the hash chain of an audit file: (intact, a one-line verdict naming the first broken line)."""
    prev, expected, count, notes = GENESIS, 1, 0, []
    bad: tuple[int, str] | None = None  # an invalid line, acceptable only if a torn_tail entry follows it
    last_raw = b""
    for number, raw, terminated in _lines(path):
        if not terminated:
            if bad is not None:
                break
            return False, (
                f"line {number}: torn: the file ends mid-line (an interrupted write, or a truncation); "
                "the server marks it when it next writes"
            )
        entry, problem = unseal(raw)
        if entry is not None and entry.get("event") == "torn_tail":
            torn = entry.get("torn")
            digest = sha256_hex(last_raw)
            if number == 1 or entry.get("prev") != digest or not isinstance(torn, dict) or torn.get("sha256") != digest:
                if bad is not None:
                    break
                return False, f"line {number}: a torn_tail entry that does not match the line before it"
            notes.append(f"line {number - 1} is an interrupted write (crash), acknowledged by line {number}")
            bad = None
        elif bad is not None:
            break
        elif entry is None:
            bad = (number, problem)
        elif entry.get("prev") != prev:
            return False, _chain_break(number, expected, entry.get("seq"))
        if entry is not None and bad is None:
            if entry.get("seq") != expected:
                return False, f"line {number}: entry #{entry.get('seq')} where #{expected} was expected (edited?)"
            prev, expected, count = str(entry["hash"]), expected + 1, count + 1
        last_raw = raw
    if bad is not None:
        return False, f"line {bad[0]}: {bad[1]}"
    if count == 0:
        return True, "intact: empty, no entries yet"
    verdict = f"intact: {count} entries, chain unbroken from genesis to entry #{expected - 1} (head hash {prev})"
    return True, "; ".join([verdict, *notes])


def who_saw(path: Path, id_anak: str) -> list[dict[str, Any]]:
    """The entries that disclosed `id_anak`: time, subject, client, method and target (run `verify` first)."""
    wanted, found = id_anak.strip(), []
    for _, raw, _ in _lines(path):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("disclosed"), list) and wanted in entry["disclosed"]:
            found.append({k: entry.get(k) for k in ("seq", "time", "subject", "client", "method", "target")})
    return found
