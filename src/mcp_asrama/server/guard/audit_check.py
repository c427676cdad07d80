"""Reading the disclosure audit: `verify` the chain (with the key, and against anchors kept elsewhere), and
`who_saw` a student's data and `who_changed` it (see `audit`, `audit_seal`).

Replicas each write a chain of their own (one file each, e.g. `audit/mcp-1.jsonl`): `audit_files` names them all
(a folder meaning every `*.jsonl` in it), each chain is verified on its own, and `merged` orders the lookups of
every file by time.

An anchor is an entry's number and seal, `SEQ:HASH`, as `verify` prints the head: copied at a known point (daily,
when rotating) to another machine or to paper. `--since SEQ:HASH` checks that the entry still exists with that seal
(the log may have grown since); `--expect-head` that it is still the last one.
"""

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_asrama.server.guard.audit_seal import GENESIS, sha256_hex, unseal

_ANCHOR = re.compile(r"(?:([1-9]\d{0,17}):)?([0-9a-f]{64})")


def audit_files(named: Sequence[Path]) -> list[Path]:
    """The audit files `named`: a file itself, a folder every `*.jsonl` in it (sorted by name); ValueError naming a
    path that does not exist or a folder without any."""
    files: list[Path] = []
    for path in named:
        if path.is_dir():
            found = sorted(p for p in path.glob("*.jsonl") if p.is_file())
            if not found:
                raise ValueError(f"{path} holds no *.jsonl audit files")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path} does not exist")
    return list(dict.fromkeys(files))  # a file named twice is read once


@dataclass(frozen=True)
class Anchor:
    """Entry #`seq` (any entry, for a head given as a hash alone) has the seal `digest`."""

    seq: int | None
    digest: str

    @classmethod
    def parse(cls, text: str, *, head: bool = False) -> "Anchor":
        """`SEQ:HASH` (a head may be the `HASH` alone); ValueError otherwise."""
        match = _ANCHOR.fullmatch(text.strip().lower())
        if match is None or (match.group(1) is None and not head):
            raise ValueError(f"{text!r} is not an anchor: give SEQ:HASH as audit verify prints the head")
        return cls(int(match.group(1)) if match.group(1) else None, match.group(2))


@dataclass
class _Chain:
    """What a walk along the file found: the first problem, or the head, and the seals the anchors ask about."""

    problem: str = ""
    last: int = 0
    head: str = GENESIS
    notes: list[str] = field(default_factory=list)
    seals: dict[int, str] = field(default_factory=dict)  # seq -> seal, for the anchored entries only
    found: int | None = None  # the first entry whose seal is the expected head's


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


def _walk(path: Path, key: bytes | None, wanted: set[int], head: str | None) -> _Chain:
    """Follow the chain from genesis; stop at the first line that breaks it."""
    chain = _Chain()
    bad: tuple[int, str] | None = None  # an invalid line, acceptable only if a torn_tail entry follows it
    last_raw = b""
    for number, raw, terminated in _lines(path):
        if not terminated:
            if bad is not None:
                break
            chain.problem = (
                f"line {number}: torn: the file ends mid-line (an interrupted write, or a truncation); "
                "the server marks it when it next writes"
            )
            return chain
        entry, digest, problem = unseal(raw, key)
        if entry is not None and entry.get("event") == "torn_tail":
            torn = entry.get("torn")
            acknowledged = sha256_hex(last_raw)
            if (
                number == 1
                or entry.get("prev") != acknowledged
                or not isinstance(torn, dict)
                or torn.get("sha256") != acknowledged
            ):
                if bad is not None:
                    break
                chain.problem = f"line {number}: a torn_tail entry that does not match the line before it"
                return chain
            chain.notes.append(f"line {number - 1} is an interrupted write (crash), acknowledged by line {number}")
            bad = None
        elif bad is not None:
            break
        elif entry is None:
            bad = (number, problem)
        elif entry.get("prev") != chain.head:
            chain.problem = _chain_break(number, chain.last + 1, entry.get("seq"))
            return chain
        if entry is not None and bad is None:
            if entry.get("seq") != chain.last + 1:
                chain.problem = (
                    f"line {number}: entry #{entry.get('seq')} where #{chain.last + 1} was expected (edited?)"
                )
                return chain
            chain.last, chain.head = chain.last + 1, digest
            if chain.last in wanted:
                chain.seals[chain.last] = digest
            if digest == head and chain.found is None:
                chain.found = chain.last
        last_raw = raw
    if bad is not None:
        chain.problem = f"line {bad[0]}: {bad[1]}"
    return chain


def _missing(seq: int, last: int) -> str:
    return f"entry #{seq} is missing: " + (f"the log was cut after #{last}" if last else "the log is empty")


def _unanchored(chain: _Chain, expect_head: Anchor | None, pinned: Sequence[tuple[int, str]]) -> str:
    """Why the anchors do not hold, or '' when they do."""
    for seq, digest in pinned:
        if seq > chain.last:
            return _missing(seq, chain.last)
        if chain.seals[seq] != digest:
            return f"entry #{seq} does not have the anchored hash: history rewritten"
    if expect_head is None or (chain.head == expect_head.digest and expect_head.seq in (None, chain.last)):
        return ""
    if chain.found is not None and expect_head.seq in (None, chain.found):
        return (
            f"entry #{chain.found + 1} follows the expected head #{chain.found}: appended after it (forged, or "
            "written since; anchor with --since)"
        )
    if expect_head.seq is None:
        return f"the expected head is not in the log, which ends at #{chain.last}: cut, or history rewritten"
    if expect_head.seq > chain.last:
        return _missing(expect_head.seq, chain.last)
    return f"entry #{expect_head.seq} does not have the expected head's hash: history rewritten"


def verify(
    path: Path, *, key: bytes | None = None, expect_head: Anchor | None = None, since: Sequence[Anchor] = ()
) -> tuple[bool, str]:
    """Check the chain of an audit file, sealed with `key` if given, and its anchors: (intact, a one-line verdict
    naming the first broken line or the anchor that does not hold)."""
    pinned = [(anchor.seq, anchor.digest) for anchor in since if anchor.seq is not None]
    if len(pinned) < len(since):
        raise ValueError("an anchor kept since needs its entry number (SEQ:HASH)")
    chain = _walk(path, key, {seq for seq, _ in pinned}, expect_head.digest if expect_head else None)
    problem = chain.problem or _unanchored(chain, expect_head, pinned)
    if problem:
        return False, problem
    if not chain.last:
        return True, "intact: empty, no entries yet"
    sealed = " sealed with the key" if key is not None else ""
    verdict = [
        f"intact: {chain.last} entr{'y' if chain.last == 1 else 'ies'}{sealed}, chain unbroken from genesis to entry "
        f"#{chain.last}; "
        f"head {chain.last}:{chain.head}",
        *chain.notes,
        *(["it is the expected head"] if expect_head else []),
        *(f"entry #{seq} is anchored" for seq, _ in pinned),
    ]
    return True, "; ".join(verdict)


def _entries(path: Path) -> Iterator[dict[str, Any]]:
    """The entries that parse as JSON objects, in order."""
    for _, raw, _ in _lines(path):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            yield entry


_WHO = ("seq", "time", "subject", "client", "method", "target")


def who_saw(path: Path, id_anak: str) -> list[dict[str, Any]]:
    """The entries that disclosed `id_anak`: time, subject, client, method and target (run `verify` first)."""
    wanted = id_anak.strip()
    return [
        {k: entry.get(k) for k in _WHO}
        for entry in _entries(path)
        if isinstance(entry.get("disclosed"), list) and wanted in entry["disclosed"]
    ]


def who_changed(path: Path, id_anak: str) -> list[dict[str, Any]]:
    """Every write attempt that names `id_anak` among its changes: who, when, through which tool, how it was
    confirmed, and old → new (run `verify` first). Refused and declined attempts name no changes."""
    wanted, found = id_anak.strip(), []
    for entry in _entries(path):
        write = entry.get("write")
        if not isinstance(write, dict) or not isinstance(write.get("changes"), list):
            continue
        for change in write["changes"]:
            if isinstance(change, dict) and change.get("id") == wanted:
                more = {k: v for k, v in change.items() if k != "id"}
                found.append({**{k: entry.get(k) for k in _WHO}, "confirmation": write.get("confirmation"), **more})
    return found


def merged(
    lookup: Callable[[Path, str], list[dict[str, Any]]], files: Sequence[Path], id_anak: str
) -> list[dict[str, Any]]:
    """`lookup` (`who_saw`, `who_changed`) over every file, ordered by time; with several files each entry names its
    `file` (an entry's `seq` counts within its own file's chain)."""
    if len(files) == 1:
        return lookup(files[0], id_anak)
    found = [{**entry, "file": str(path)} for path in files for entry in lookup(path, id_anak)]
    return sorted(found, key=lambda entry: str(entry.get("time") or ""))  # stable: ties keep file and chain order
