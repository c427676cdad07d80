"""Disclosure audit: one hash-chained line per request, the ids that went out (never the data), tamper evidence."""

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, Implementation

from mcp_asrama import cli
from mcp_asrama.server.guard import audit, audit_check, audit_log, audit_seal
from mcp_asrama.server.settings import ServerSettings
from tests.conftest import TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR
from tests.server.conftest import server_for

pytestmark = pytest.mark.anyio

HOST = Implementation(name="audit-test-host", version="1.0")


@asynccontextmanager
async def audited(app: FastAPI, path: Path, era: str) -> AsyncIterator[Client]:
    """A fresh server writing its audit to `path`, and the SDK's in-memory client on it."""
    async with Client(server_for(app, audit_log=path), mode=era, cache=None, client_info=HOST) as client:
        yield client


def entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def by_method(path: Path, method: str) -> list[dict[str, Any]]:
    return [e for e in entries(path) if e.get("method") == method]


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.jsonl"


async def six_requests(client: Client) -> None:
    """Six audited requests in a fixed order (lists are never audited): six lines."""
    await client.call_tool("daftar_kamar", {})
    await client.call_tool("cari_anak", {"kelas": "7A"})
    await client.call_tool("detail_anak", {"id_anak": "A002"})
    await client.read_resource("asrama://anak/A001")
    await client.get_prompt("laporan_harian", {"tanggal": "2026-10-06"})
    await client.call_tool("detail_anak", {"id_anak": "A999"})


@pytest.fixture
async def six_lines(service_app: FastAPI, log_path: Path) -> Path:
    async with audited(service_app, log_path, "2026-07-28") as client:
        await six_requests(client)
    assert len(lines(log_path)) == 6
    return log_path


# --- what a line records ------------------------------------------------------------------------------------------


async def test_each_data_request_gets_one_line_with_who_what_outcome_and_disclosed_ids(
    service_app: FastAPI, log_path: Path, era: str
) -> None:
    async with audited(service_app, log_path, era) as client:
        await client.list_tools()
        await client.list_resources()
        await client.list_prompts()
        assert not (await client.call_tool("cari_anak", {"kelas": "7A"})).is_error
        await client.read_resource("asrama://anak/A002")
        await client.get_prompt("laporan_harian", {"tanggal": "2026-10-06", "kelas": "7A"})

    logged = entries(log_path)
    # The handshake, the lists and notifications (notifications/initialized) disclose nothing: no line.
    assert [e["method"] for e in logged] == ["tools/call", "resources/read", "prompts/get"]
    for entry in logged:
        assert entry["subject"] == "local" and "oauth_client" not in entry
        assert entry["client"] == "audit-test-host"
        assert entry["event"] == "request"
        assert entry["outcome"] == "ok"
        assert isinstance(entry["latency_ms"], float) and 0 <= entry["latency_ms"] < 10_000
        when = datetime.fromisoformat(entry["time"])
        assert when.utcoffset() == timedelta(0)
        assert abs(datetime.now(when.tzinfo) - when) < timedelta(minutes=1)
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))

    [call] = by_method(log_path, "tools/call")
    assert (call["target"], call["arguments"], call["disclosed"]) == ("cari_anak", {"kelas": "7A"}, ["A001", "A003"])
    [read] = by_method(log_path, "resources/read")
    assert (read["target"], read["arguments"], read["disclosed"]) == ("asrama://anak/A002", None, ["A002"])
    [prompt] = by_method(log_path, "prompts/get")
    assert prompt["target"] == "laporan_harian"
    assert prompt["arguments"] == {"tanggal": "2026-10-06", "kelas": "7A"}
    assert prompt["disclosed"] == []


async def test_failures_are_recorded_with_their_outcome_and_disclose_nothing(
    service_app: FastAPI, log_path: Path, era: str
) -> None:
    async with audited(service_app, log_path, era) as client:
        missing = await client.call_tool("detail_anak", {"id_anak": "A999"})
        assert missing.is_error
        with pytest.raises(MCPError):
            await client.call_tool("tidak_ada", {})
        with pytest.raises(MCPError):
            await client.read_resource("asrama://anak/A999")
        with pytest.raises(MCPError):
            await client.get_prompt("laporan_harian", {})

    calls = by_method(log_path, "tools/call")
    assert [(c["target"], c["outcome"], c.get("code"), c["disclosed"]) for c in calls] == [
        ("detail_anak", "tool_error", None, []),  # its message names A999, but no data went out
        ("tidak_ada", "error", INVALID_PARAMS, []),
    ]
    [read] = by_method(log_path, "resources/read")
    assert (read["outcome"], read["code"], read["disclosed"]) == ("error", INVALID_PARAMS, [])
    [prompt] = by_method(log_path, "prompts/get")
    assert (prompt["outcome"], prompt["code"]) == ("error", INVALID_PARAMS)


async def test_every_tool_and_resource_records_exactly_the_students_it_disclosed(
    service_app: FastAPI, log_path: Path
) -> None:
    """Three students in all: every attendance aggregate is a small group, so it discloses each of them."""
    async with audited(service_app, log_path, "2026-07-28") as client:
        await client.call_tool("detail_anak", {"id_anak": "A003"})
        await client.call_tool("daftar_kamar", {})
        await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
        await client.call_tool("rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09"})
        await client.call_tool("cari_anak", {"kelas": "9Z"})
        await client.read_resource("asrama://kamar")
        await client.read_resource("asrama://absensi/2026-10-07")

    reads = [e for e in entries(log_path) if e["method"] in ("tools/call", "resources/read")]
    assert [(e["target"], e["disclosed"]) for e in reads] == [
        ("detail_anak", ["A003"]),
        ("daftar_kamar", []),  # rooms, no student
        ("absensi_harian", ["A001", "A002", "A003"]),  # only A003 is listed, but the counts are of all three
        ("rekap_absensi", ["A001", "A002", "A003"]),
        ("cari_anak", []),
        ("asrama://kamar", []),
        ("asrama://absensi/2026-10-07", ["A001", "A002", "A003"]),
    ]


async def test_the_log_never_holds_personal_data_or_a_students_name(service_app: FastAPI, log_path: Path) -> None:
    async with audited(service_app, log_path, "2026-07-28") as client:
        await client.call_tool("cari_anak", {"kelas": "7A"})
        for id_anak in ("A001", "A002", "A003"):
            await client.call_tool("detail_anak", {"id_anak": id_anak})
            await client.read_resource(f"asrama://anak/{id_anak}")
        await client.call_tool("daftar_kamar", {})
        await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
        await client.call_tool("rekap_absensi", {"dari": "2026-10-06", "sampai": "2026-10-09"})
        await client.read_resource("asrama://absensi/2026-10-06")

    text = log_path.read_text(encoding="utf-8")
    assert "A001" in text and "A002" in text and "A003" in text
    sensitive = [str(row[f]) for row in TUTORIAL_ANAK for f in ("nama", "nama_wali", "nik", "no_hp_wali", "alamat")]
    sensitive += [row["tanggal_lahir"].isoformat() for row in TUTORIAL_ANAK]
    sensitive += [str(row[f]) for row in TUTORIAL_KAMAR for f in ("nama", "musyrif")]
    sensitive += [str(row["keterangan"]) for row in TUTORIAL_ABSENSI if row["keterangan"]]
    assert sensitive and [value for value in sensitive if value in text] == []


async def test_arguments_are_kept_but_bounded(service_app: FastAPI, log_path: Path) -> None:
    many = {f"x{i}": i for i in range(40)}
    async with audited(service_app, log_path, "2026-07-28") as client:
        result = await client.call_tool("cari_anak", {"nama": "N" * 5000, "kelas": ["7A"] * 500, **many})
        assert result.is_error

    [entry] = entries(log_path)
    arguments = entry["arguments"]
    assert len(arguments) == 17 and arguments["…"] == "+26 more"
    assert arguments["nama"] == "N" * 199 + "…"
    assert isinstance(arguments["kelas"], str) and len(arguments["kelas"]) == 200
    assert arguments["x0"] == 0
    assert len(lines(log_path)[0]) < 4096


async def test_subject_is_the_validated_tokens_subject(service_app: FastAPI, log_path: Path) -> None:
    token = AccessToken(token="opaque", client_id="claude-desktop", scopes=["asrama:read"], subject="ust-ridwan")
    reset = auth_context_var.set(AuthenticatedUser(token))  # what the SDK's HTTP auth middleware sets
    try:
        async with audited(service_app, log_path, "2026-07-28") as client:
            await client.call_tool("daftar_kamar", {})
    finally:
        auth_context_var.reset(reset)

    assert [(e["subject"], e["oauth_client"]) for e in entries(log_path)] == [("ust-ridwan", "claude-desktop")]


# --- the chain ----------------------------------------------------------------------------------------------------


async def test_chain_verifies_and_a_restart_continues_it(service_app: FastAPI, log_path: Path) -> None:
    async with audited(service_app, log_path, "2026-07-28") as client:
        await client.call_tool("daftar_kamar", {})
        await client.call_tool("cari_anak", {"kelas": "7A"})
        await client.read_resource("asrama://kamar")
    async with audited(service_app, log_path, "legacy") as client:  # a new server on the same file
        await client.get_prompt("laporan_kamar", {"nama_kamar": "Al-Fatih 1"})
        await client.call_tool("detail_anak", {"id_anak": "A001"})
        await client.call_tool("detail_anak", {"id_anak": "A002"})

    logged = entries(log_path)
    assert [(e["method"], e["target"]) for e in logged] == [
        ("tools/call", "daftar_kamar"),
        ("tools/call", "cari_anak"),
        ("resources/read", "asrama://kamar"),
        ("prompts/get", "laporan_kamar"),
        ("tools/call", "detail_anak"),
        ("tools/call", "detail_anak"),
    ]
    assert [e["seq"] for e in logged] == [1, 2, 3, 4, 5, 6]
    assert logged[0]["prev"] == audit_seal.GENESIS
    assert [e["prev"] for e in logged[1:]] == [e["hash"] for e in logged[:-1]]
    intact, verdict = audit_check.verify(log_path)
    assert intact, verdict
    assert verdict == f"intact: 6 entries, chain unbroken from genesis to entry #6; head 6:{logged[-1]['hash']}"


async def test_concurrent_requests_are_serialized_into_one_chain(service_app: FastAPI, log_path: Path) -> None:
    async with audited(service_app, log_path, "2026-07-28") as client, anyio.create_task_group() as group:
        for id_anak in ["A001", "A002", "A003"] * 7:
            group.start_soon(client.call_tool, "detail_anak", {"id_anak": id_anak})

    logged = entries(log_path)
    assert len(by_method(log_path, "tools/call")) == 21
    assert [e["seq"] for e in logged] == list(range(1, len(logged) + 1))
    assert audit_check.verify(log_path)[0]


def test_writers_in_two_processes_share_one_chain(log_path: Path) -> None:
    """Two stdio servers on one file (two writers, each with its own state), writing at the same time."""
    writers = [audit_log.AuditLog(log_path), audit_log.AuditLog(log_path)]

    def write(writer: audit_log.AuditLog, name: str) -> None:
        for n in range(40):
            writer.append({"time": "t", "event": "request", "subject": name, "method": "ping", "n": n})

    threads = [threading.Thread(target=write, args=(w, f"w{i}")) for i, w in enumerate(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    logged = entries(log_path)
    assert [e["seq"] for e in logged] == list(range(1, 81))
    assert {e["subject"] for e in logged} == {"w0", "w1"}
    assert audit_check.verify(log_path)[0], audit_check.verify(log_path)[1]


def test_a_rotated_file_starts_a_new_chain_and_the_old_one_still_verifies(log_path: Path) -> None:
    writer = audit_log.AuditLog(log_path)
    for n in range(3):
        writer.append({"time": "t", "event": "request", "method": "ping", "n": n})
    log_path.rename(log_path.with_suffix(".1"))  # logrotate (rename, then the writer creates a new file)
    writer.append({"time": "t", "event": "request", "method": "ping", "n": 3})

    [fresh] = entries(log_path)
    assert (fresh["seq"], fresh["prev"], fresh["n"]) == (1, audit_seal.GENESIS, 3)
    assert audit_check.verify(log_path.with_suffix(".1"))[1].startswith("intact: 3 entries")
    assert audit_check.verify(log_path)[0]


def test_an_empty_file_is_intact(log_path: Path) -> None:
    log_path.write_bytes(b"")
    assert audit_check.verify(log_path) == (True, "intact: empty, no entries yet")


def _edit_byte(raw: list[bytes]) -> list[bytes]:
    assert b'"A001"' in raw[1]  # line 2: the search that disclosed A001 and A003
    raw[1] = raw[1].replace(b'"A001"', b'"A004"')
    return raw


def _break_json(raw: list[bytes]) -> list[bytes]:
    raw[2] = raw[2].replace(b'"method":', b'"method"', 1)
    return raw


def _delete(raw: list[bytes]) -> list[bytes]:
    del raw[2]
    return raw


def _swap(raw: list[bytes]) -> list[bytes]:
    raw[1], raw[2] = raw[2], raw[1]
    return raw


def _insert_copy(raw: list[bytes]) -> list[bytes]:
    raw.insert(4, raw[0])
    return raw


def _insert_by_hand(raw: list[bytes]) -> list[bytes]:
    raw.insert(2, b'{"seq":3,"method":"tools/call","disclosed":[]}\n')
    return raw


def _edit_last(raw: list[bytes]) -> list[bytes]:
    raw[5] = raw[5].replace(b'"subject":"local"', b'"subject":"other"')
    return raw


def _reseal(raw: list[bytes]) -> list[bytes]:
    """An editor who recomputes the edited line's own hash is caught by the next line."""
    entry = json.loads(raw[3])
    entry["disclosed"] = []
    del entry["hash"]
    raw[3] = audit_seal.seal(entry)[0] + b"\n"
    return raw


def _renumber_last(raw: list[bytes]) -> list[bytes]:
    entry = json.loads(raw[5])
    entry["seq"] = 9
    del entry["hash"]
    raw[5] = audit_seal.seal(entry)[0] + b"\n"
    return raw


def _truncate(raw: list[bytes]) -> list[bytes]:
    raw[5] = raw[5][: len(raw[5]) // 2]
    return raw


def _drop_final_newline(raw: list[bytes]) -> list[bytes]:
    raw[5] = raw[5][:-1]
    return raw


TAMPERING: list[tuple[Callable[[list[bytes]], list[bytes]], str]] = [
    (_edit_byte, "line 2: edited: its content does not match its hash"),
    (_break_json, "line 3: not valid JSON (edited, inserted or corrupted)"),
    (_delete, "line 3: the chain breaks: its prev is not the hash of line 2; expected entry #3, found #4"),
    (_swap, "line 2: the chain breaks: its prev is not the hash of line 1; expected entry #2, found #3"),
    (_insert_copy, "line 5: the chain breaks: its prev is not the hash of line 4; expected entry #5, found #1"),
    (_insert_by_hand, "line 3: not an audit entry: no hash at its end (edited or inserted by hand)"),
    (_edit_last, "line 6: edited: its content does not match its hash"),
    (_reseal, "line 5: the chain breaks: its prev is not the hash of line 4; expected entry #5, found #5"),
    (_renumber_last, "line 6: entry #9 where #6 was expected (edited?)"),
    (_truncate, "line 6: torn: the file ends mid-line"),
    (_drop_final_newline, "line 6: torn: the file ends mid-line"),
]


@pytest.mark.parametrize(("tamper", "first_break"), TAMPERING, ids=[t.__name__.strip("_") for t, _ in TAMPERING])
async def test_verify_names_the_first_broken_line(
    six_lines: Path, tamper: Callable[[list[bytes]], list[bytes]], first_break: str
) -> None:
    assert audit_check.verify(six_lines)[0]
    six_lines.write_bytes(b"".join(tamper(lines(six_lines))))

    intact, verdict = audit_check.verify(six_lines)
    assert not intact
    assert verdict.startswith(first_break), verdict


async def test_a_torn_tail_is_marked_on_restart_never_chained_over_silently(
    service_app: FastAPI, six_lines: Path
) -> None:
    raw = lines(six_lines)
    torn = raw[5][:40]
    six_lines.write_bytes(b"".join(raw[:5]) + torn)  # the crash: line 6 cut mid-write
    assert audit_check.verify(six_lines)[1].startswith("line 6: torn")

    async with audited(service_app, six_lines, "2026-07-28") as client:
        await client.call_tool("daftar_kamar", {})
        await client.call_tool("detail_anak", {"id_anak": "A003"})

    after = lines(six_lines)
    assert len(after) == 9
    assert after[5] == torn + b"\n"  # the torn bytes are kept, ended, and acknowledged by the next line
    marker, rooms, call = (json.loads(line) for line in after[6:])
    assert marker["event"] == "torn_tail"
    assert marker["seq"] == 6  # entries 1-5 were whole
    assert marker["torn"] == {"offset": sum(len(r) for r in raw[:5]), "bytes": 40, "sha256": marker["prev"]}
    assert (rooms["seq"], rooms["prev"]) == (7, marker["hash"])
    assert (call["seq"], call["disclosed"]) == (8, ["A003"])
    intact, verdict = audit_check.verify(six_lines)
    assert intact, verdict
    assert verdict.endswith("; line 6 is an interrupted write (crash), acknowledged by line 7")
    assert "to entry #8" in verdict


async def test_a_last_line_that_lost_only_its_newline_is_acknowledged_too(
    service_app: FastAPI, six_lines: Path
) -> None:
    six_lines.write_bytes(six_lines.read_bytes()[:-1])
    async with audited(service_app, six_lines, "2026-07-28") as client:
        await client.call_tool("daftar_kamar", {})

    logged = entries(six_lines)
    assert [(e["seq"], e["event"]) for e in logged[5:]] == [(6, "request"), (7, "torn_tail"), (8, "request")]
    intact, verdict = audit_check.verify(six_lines)
    assert intact and "line 6 is an interrupted write" in verdict


async def test_an_edited_last_line_is_still_reported_after_a_restart(service_app: FastAPI, six_lines: Path) -> None:
    six_lines.write_bytes(six_lines.read_bytes().replace(b'"outcome":"tool_error"', b'"outcome":"ok"'))
    async with audited(service_app, six_lines, "2026-07-28") as client:
        await client.call_tool("daftar_kamar", {})

    assert len(lines(six_lines)) == 7
    assert audit_check.verify(six_lines) == (False, "line 6: edited: its content does not match its hash")


async def test_a_forged_torn_tail_entry_is_refused(six_lines: Path) -> None:
    log = audit_log.AuditLog(six_lines)
    log.append({"time": "t", "event": "torn_tail", "torn": {"sha256": "0" * 64}})
    assert audit_check.verify(six_lines) == (False, "line 7: a torn_tail entry that does not match the line before it")


# --- failing closed -----------------------------------------------------------------------------------------------


async def test_unwritable_log_withholds_data_and_says_so(
    service_app: FastAPI, tmp_path: Path, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "not-yet" / "audit.jsonl"
    caplog.set_level(logging.ERROR, logger=audit.__name__)
    async with audited(service_app, path, era) as client:
        tools = await client.list_tools()  # no children's data: never audited, answered
        assert [t.name for t in tools.tools][:2] == ["cari_anak", "detail_anak"]

        result = await client.call_tool("cari_anak", {"kelas": "7A"})
        assert result.is_error
        assert result.structured_content is None
        assert [getattr(c, "text", None) for c in result.content] == [audit.WITHHELD]
        with pytest.raises(MCPError) as caught:
            await client.read_resource("asrama://anak/A001")
        assert (caught.value.error.code, caught.value.error.message) == (INTERNAL_ERROR, audit.WITHHELD)
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("laporan_harian", {"tanggal": "2026-10-06"})
        assert caught.value.error.code == INTERNAL_ERROR

        path.parent.mkdir()  # the operator fixes it: the next request is recorded and answered
        result = await client.call_tool("cari_anak", {"kelas": "7A"})
        assert not result.is_error and result.structured_content is not None

    failures = [r for r in caplog.records if r.getMessage() == "audit log not written"]
    assert len(failures) == 3 and all(r.levelno == logging.ERROR for r in failures)
    assert {getattr(r, "error", None) for r in failures} == {"FileNotFoundError"}
    assert [(e["target"], e["disclosed"]) for e in by_method(path, "tools/call")] == [("cari_anak", ["A001", "A003"])]
    assert audit_check.verify(path)[0]


def test_no_middleware_without_the_setting(log_path: Path) -> None:
    assert audit.middleware(ServerSettings(), lambda _tool: False) == []
    auditors = audit.middleware(ServerSettings(audit_log=log_path), lambda _tool: False)
    assert [type(m) for m in auditors] == [audit.Auditor]
    assert not log_path.exists()  # opened on the first request, not when the server is built


# --- who saw, and the CLI -----------------------------------------------------------------------------------------


async def test_who_saw_lists_every_disclosure_of_one_student(six_lines: Path) -> None:
    saw = audit_check.who_saw(six_lines, "A001")
    assert [(e["seq"], e["method"], e["target"]) for e in saw] == [
        (2, "tools/call", "cari_anak"),
        (4, "resources/read", "asrama://anak/A001"),
    ]
    assert all(e["subject"] == "local" and e["client"] == "audit-test-host" for e in saw)
    assert set(saw[0]) == {"seq", "time", "subject", "client", "method", "target"}
    assert [e["target"] for e in audit_check.who_saw(six_lines, "A002")] == ["detail_anak"]
    assert audit_check.who_saw(six_lines, "A999") == []  # asked for, not found: nothing went out


async def test_cli_verify_exits_0_when_intact_and_1_naming_the_broken_line(
    six_lines: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["audit", "verify", str(six_lines)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("intact: 6 entries")

    raw = lines(six_lines)
    del raw[3]
    six_lines.write_bytes(b"".join(raw))
    assert cli.main(["audit", "verify", str(six_lines)]) == 1
    out = capsys.readouterr()
    assert out.err.startswith("line 4: the chain breaks") and out.out == ""


async def test_cli_who_saw_prints_one_json_line_per_disclosure(
    six_lines: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli.main(["audit", "who-saw", "A003", str(six_lines)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["method"], e["target"], e["subject"]) for e in printed] == [("tools/call", "cari_anak", "local")]

    monkeypatch.setenv("ASRAMA_AUDIT_LOG", str(six_lines))  # the file defaults to the server's setting
    assert cli.main(["audit", "who-saw", "A002"]) == 0
    assert [json.loads(line)["target"] for line in capsys.readouterr().out.splitlines()] == ["detail_anak"]


async def test_cli_who_changed_prints_each_change_of_one_student(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "audit.jsonl"
    writer = audit_log.AuditLog(log, key=None)
    base = {"time": "t", "subject": "musyrif-1", "client": "claude", "method": "tools/call", "target": "catat_absensi"}
    change = {"id": "A001", "old": None, "new": "hadir"}
    writer.append({**base, "write": {"confirmation": "accepted", "changes": [change, {**change, "id": "A002"}]}})
    writer.append({**base, "write": {"confirmation": "declined", "changes": []}})
    writer.append({**base, "target": "ajukan_izin", "write": {"confirmation": "accepted", "changes": [
        {"id": "A001", "old": "aktif", "new": "izin", "izin": "h4ndle"}]}})  # fmt: skip
    assert cli.main(["audit", "who-changed", "A001", str(log)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["target"], e["confirmation"], e["old"], e["new"], e.get("izin")) for e in printed] == [
        ("catat_absensi", "accepted", None, "hadir", None),
        ("ajukan_izin", "accepted", "aktif", "izin", "h4ndle"),
    ]
    assert all(e["subject"] == "musyrif-1" and e["seq"] for e in printed)
    assert cli.main(["audit", "who-changed", "A404", str(log)]) == 0
    assert capsys.readouterr().out == ""


# --- reading results ----------------------------------------------------------------------------------------------


def test_disclosed_ids_are_found_anywhere_in_structured_and_json_text_content() -> None:
    result = {
        "structuredContent": {"data": [{"id": "A001", "wali": {"id_anak": "A002"}}], "id": 7},
        "content": [
            {"type": "text", "text": "Anak dengan id 'A009' tidak ditemukan"},
            {"type": "resource", "resource": {"uri": "x://y", "text": '[{"id_anak": "A003"}]'}},
        ],
    }
    assert audit.disclosed_ids("tools/call", result) == ["A001", "A002", "A003"]
    assert audit.disclosed_ids("resources/read", {"contents": [{"uri": "x", "text": '{"id":"B1"}'}]}) == ["B1"]
    assert audit.disclosed_ids("resources/read", {"contents": [{"uri": "x", "blob": "eyJpZCI6IkIxIn0="}]}) == []
    assert audit.disclosed_ids("tools/list", {"tools": [{"name": "x", "id": "A001"}]}) == []
