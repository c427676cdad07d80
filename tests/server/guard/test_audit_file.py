"""The audit file kept open between lines (rotation, deletion, writers in other processes), and the disclosed ids read
from a result in one pass, which must be every id a client sees."""

import itertools
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import TextContent

from mcp_asrama.privacy import json_of
from mcp_asrama.server.guard import audit, audit_check, audit_fields, audit_log, audit_seal
from tests.server.conftest import server_for

pytestmark = pytest.mark.anyio


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def line(n: int, subject: str = "local") -> dict[str, Any]:
    return {"time": "t", "event": "request", "subject": subject, "method": "tools/call", "n": n}


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


# --- the file kept open -------------------------------------------------------------------------------------------


def test_the_file_stays_open_between_lines(log_path: Path) -> None:
    writer = audit_log.AuditLog(log_path)
    writer.append(line(0))
    first = writer._fd
    writer.append(line(1))
    assert first is not None and writer._fd == first  # one descriptor for every line
    assert os.fstat(first).st_ino == log_path.stat().st_ino
    writer.close()
    assert writer._fd is None
    with pytest.raises(OSError):
        os.fstat(first)
    writer.append(line(2))  # opened again, chained on
    assert [(e["seq"], e["n"]) for e in entries(log_path)] == [(1, 0), (2, 1), (3, 2)]
    assert audit_check.verify(log_path)[0]


def test_after_a_rotation_the_next_line_goes_to_the_new_file_chained_from_its_tail(log_path: Path) -> None:
    """logrotate moves the file away while our descriptor is open; another writer starts the new file first."""
    ours = audit_log.AuditLog(log_path)
    for n in range(3):
        ours.append(line(n, "ours"))
    rotated = log_path.with_suffix(".1")
    log_path.rename(rotated)
    other = audit_log.AuditLog(log_path)  # another process's writer, say
    other.append(line(10, "other"))
    other.append(line(11, "other"))

    ours.append(line(3, "ours"))

    fresh = entries(log_path)
    assert [(e["seq"], e["subject"], e["n"]) for e in fresh] == [(1, "other", 10), (2, "other", 11), (3, "ours", 3)]
    assert fresh[2]["prev"] == fresh[1]["hash"]
    assert [e["n"] for e in entries(rotated)] == [0, 1, 2]  # nothing more went to the moved file
    assert audit_check.verify(rotated)[1].startswith("intact: 3 entries")
    assert audit_check.verify(log_path)[1].startswith("intact: 3 entries")


def test_a_rotation_to_an_empty_new_file_starts_at_genesis(log_path: Path) -> None:
    writer = audit_log.AuditLog(log_path)
    writer.append(line(0))
    log_path.rename(log_path.with_suffix(".1"))
    log_path.touch(mode=0o600)  # copytruncate-style tools and `create` leave an empty file

    writer.append(line(1))

    [entry] = entries(log_path)
    assert (entry["seq"], entry["prev"], entry["n"]) == (1, audit_seal.GENESIS, 1)


def test_a_deleted_file_is_created_again_0600_by_the_next_line(log_path: Path) -> None:
    writer = audit_log.AuditLog(log_path)
    writer.append(line(0))
    writer.append(line(1))
    log_path.unlink()
    old_umask = os.umask(0)  # the mode is ours, whatever the umask lets through
    try:
        writer.append(line(2))
    finally:
        os.umask(old_umask)

    assert stat.S_IMODE(log_path.stat().st_mode) == 0o600
    assert writer._fd is not None and os.fstat(writer._fd).st_ino == log_path.stat().st_ino
    [entry] = entries(log_path)
    assert (entry["seq"], entry["prev"], entry["n"]) == (1, audit_seal.GENESIS, 2)
    assert audit_check.verify(log_path)[0]


def test_a_folder_that_goes_away_fails_the_line_and_the_next_one_works_again(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.jsonl"
    path.parent.mkdir()
    writer = audit_log.AuditLog(path)
    writer.append(line(0))
    path.parent.rename(tmp_path / "moved")
    with pytest.raises(FileNotFoundError):
        writer.append(line(1))  # never into the open file, now elsewhere
    assert writer._fd is None  # nothing kept of a failed write
    path.parent.mkdir()
    writer.append(line(2))
    assert [(e["seq"], e["n"]) for e in entries(path)] == [(1, 2)]
    assert [e["n"] for e in entries(tmp_path / "moved" / "audit.jsonl")] == [0]


WRITER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from mcp_asrama.server.guard.audit_log import AuditLog

    path, name, count, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    writer = AuditLog(path)
    Path(f"{go}.{name}").touch()  # ready
    while not go.exists():
        time.sleep(0.001)

    def the_other_has_written():
        try:
            return any(json.loads(line)["subject"] != name for line in path.read_bytes().splitlines())
        except ValueError:  # a line read while it was being written
            return False

    for n in range(count):
        if n == count // 2:  # halfway, wait for the other writer: the lines interleave however busy the machine is
            deadline = time.monotonic() + 30
            while not the_other_has_written() and time.monotonic() < deadline:
                time.sleep(0.001)
        writer.append({"time": "t", "event": "request", "subject": name, "method": "tools/call", "n": n})
    """
)


def run_two_writers(script: str, go: Path, *arguments: str) -> None:
    """Run `script` as processes `p1` and `p2` (argv: name, then `arguments`); once both said they are ready
    (`go.<name>` exists), let them go at once (`go`), and wait for both to end well."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASRAMA_")}
    writers = [
        subprocess.Popen([sys.executable, "-c", script, arguments[0], name, *arguments[1:]], env=env)
        for name in ("p1", "p2")
    ]
    try:
        deadline = time.monotonic() + 30
        while not all(go.with_name(f"go.{name}").exists() for name in ("p1", "p2")):
            assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
            time.sleep(0.01)
        go.touch()
        assert [w.wait(timeout=60) for w in writers] == [0, 0]
    finally:
        for writer in writers:
            writer.kill()


def test_writers_in_two_processes_keep_one_chain(log_path: Path, tmp_path: Path) -> None:
    """Two processes, each with its descriptor open between lines, appending at the same time."""
    go, count = tmp_path / "go", 60
    run_two_writers(WRITER, go, str(log_path), str(count), str(go))

    logged = entries(log_path)
    assert [e["seq"] for e in logged] == list(range(1, 2 * count + 1))
    for name in ("p1", "p2"):
        assert [e["n"] for e in logged if e["subject"] == name] == list(range(count))
    switches = sum(a["subject"] != b["subject"] for a, b in itertools.pairwise(logged))
    assert switches >= 2, "the two writers did not interleave: the test proved nothing"  # each waits halfway
    intact, verdict = audit_check.verify(log_path)
    assert intact, verdict


# --- the ids of a result ------------------------------------------------------------------------------------------


def every_id(value: Any) -> set[str]:
    """The reference, read the long way: `id`/`id_anak` string values anywhere in `value`."""
    if isinstance(value, dict):
        own = {v for k, v in value.items() if k in audit_fields.ID_KEYS and isinstance(v, str)}
        return own.union(*(every_id(v) for v in value.values()))
    if isinstance(value, list | tuple):
        return set().union(*(every_id(v) for v in value))
    return set()


def reference(structured: Any, texts: list[str]) -> list[str]:
    """What a client sees: the ids of structuredContent and of every text that is JSON."""
    parsed = []
    for text in texts:
        try:
            parsed.append(json.loads(text))
        except ValueError:
            continue
    return sorted(every_id([structured, *parsed]))


def tool_wire(structured: Any, *texts: str) -> dict[str, Any]:
    """A tools/call result as the SDK hands it to the middleware (its wire dict)."""
    wire: dict[str, Any] = {"content": [{"type": "text", "text": t} for t in texts], "isError": False}
    return wire if structured is None else {**wire, "structuredContent": structured}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_ids_of_a_text_that_is_not_the_structured_content_are_found_too() -> None:
    structured = {"data": [{"id": "A001", "wali": {"id_anak": "A005"}}]}
    cases = [
        (tool_wire(structured, compact(structured)), ["A001", "A005"]),  # the same JSON: walked once
        (tool_wire(structured, '{"data":[{"id":"A001"},{"id":"A002"}]}'), ["A001", "A002", "A005"]),
        (tool_wire(structured, compact(structured), '{"id_anak":"A003"}'), ["A001", "A003", "A005"]),
        (tool_wire(structured, json.dumps(structured, indent=2)), ["A001", "A005"]),  # spaced, but equal
        (tool_wire({"data": [{"id": "A001"}]}, '{"data":[{"id":"A001"}],"x":1}'), ["A001"]),  # not equal: both
        (tool_wire(None, '[{"id":"B1"}]'), ["B1"]),
        (tool_wire(structured, "Anak dengan id 'A009' tidak ditemukan"), ["A001", "A005"]),  # prose: nothing
        (tool_wire(structured, '{"id":"A010"} and then prose'), ["A001", "A005"]),  # not JSON: nothing of it
        (tool_wire({"data": ({"id": "T1"},)}, "{}"), ["T1"]),  # a tuple (a middleware's own dict)
    ]
    for wire, expected in cases:
        assert audit.disclosed_ids("tools/call", wire) == expected


def test_an_embedded_resources_text_and_resource_and_prompt_texts_are_read() -> None:
    embedded = {"type": "resource", "resource": {"uri": "asrama://anak/A004", "text": '{"id":"A004"}'}}
    wire = {"content": [{"type": "text", "text": "{}"}, embedded], "structuredContent": {}}
    assert audit.disclosed_ids("tools/call", wire) == ["A004"]
    read = {"contents": [{"uri": "x", "text": '{"data":[{"id":"B2"},{"id":"B1"}]}'}, {"uri": "y", "text": "[]"}]}
    assert audit.disclosed_ids("resources/read", read) == ["B1", "B2"]
    prompt = {"messages": [{"role": "user", "content": {"type": "text", "text": '{"id_anak":"C1"}'}}]}
    assert audit.disclosed_ids("prompts/get", prompt) == ["C1"]


# Strings that look like an id's key or value, escaped in the JSON text: a search of the text must not be fooled.
HOSTILE = ['"id":"Z1"', 'x"', "\\", '\\"id":"Z2', "A\\", 'B"1', "é\n"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["A001", "A002", "x", *HOSTILE]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["id", "id_anak", "data", "nama", 'x"id', *HOSTILE]), inner, max_size=4)
    ),
    max_leaves=12,
)
TEXTS = st.lists(
    st.one_of(JSON.map(compact), JSON.map(json.dumps), st.sampled_from(["prose", "SAME", "SAME as our tools send it"])),
    max_size=3,
)


@settings(max_examples=500, deadline=None)
@given(structured=st.one_of(st.none(), st.dictionaries(st.sampled_from(["id", "data"]), JSON, max_size=3)), texts=TEXTS)
def test_the_ids_are_always_every_id_a_client_sees(structured: Any, texts: list[str]) -> None:
    same = {"SAME": compact(structured), "SAME as our tools send it": json_of(structured)}
    sent = [same.get(t, t) for t in texts]
    assert audit.disclosed_ids("tools/call", tool_wire(structured, *sent)) == reference(structured, sent)


def test_the_text_our_tools_send_is_searched_for_ids_escapes_and_all() -> None:
    """The structuredContent's own JSON text is searched, not parsed: a key or value that only looks like an id
    inside a string is none, an escaped id is read as a client reads it, a long one cut short."""
    structured = {
        "data": [{"id": 'A"1', "nama": '"id":"Z9"', 'x"id': "Z8", "x\\": {"id_anak": "\\B2"}}, {"id": 7}],
        "id": "C" * 80,
        "catatan": '\\"id":"Z7',
    }
    wire = tool_wire(structured, json_of(structured))
    assert audit.disclosed_ids("tools/call", wire) == sorted(['A"1', "\\B2", "C" * 64])
    assert wire["content"][0]["text"].count('"id":"') == 3  # the key x"id holds one too: no id


async def test_our_tools_send_the_structured_content_as_its_json_text(service_app: FastAPI, tmp_path: Path) -> None:
    """What lets the Auditor skip walking structuredContent (it would still be right, only slower, if this broke);
    and the audited line names the ids the client received."""
    log = tmp_path / "audit.jsonl"
    async with Client(server_for(service_app, audit_log=log), mode="2026-07-28", cache=None) as client:
        seen = []
        for name, arguments in [("cari_anak", {"kelas": "7A"}), ("daftar_kamar", {})]:
            result = await client.call_tool(name, arguments)
            [block] = result.content
            assert isinstance(block, TextContent) and json.loads(block.text) == result.structured_content
            seen.append(reference(result.structured_content, [block.text]))
    assert [e["disclosed"] for e in entries(log)] == seen == [["A001", "A003"], []]
