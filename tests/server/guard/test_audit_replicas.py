"""The audit of replicas: each server writes a chain of its own file; `mcp-asrama audit verify` checks every chain on
its own and reports per file, `who-saw` and `who-changed` merge every file's entries by time."""

import json
from pathlib import Path

import anyio
import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama import cli
from mcp_asrama.server.guard import audit_log
from tests.server.conftest import server_for

pytestmark = pytest.mark.anyio


@pytest.fixture
async def replica_files(service_app: FastAPI, tmp_path: Path) -> tuple[Path, Path]:
    """audit/mcp-1.jsonl and audit/mcp-2.jsonl, written by two servers taking turns: A, B, A, B."""
    folder = tmp_path / "audit"
    folder.mkdir()
    first, second = folder / "mcp-1.jsonl", folder / "mcp-2.jsonl"
    async with (
        Client(server_for(service_app, audit_log=first), mode="2026-07-28", cache=None) as a,
        Client(server_for(service_app, audit_log=second), mode="2026-07-28", cache=None) as b,
    ):
        for client, arguments in ((a, {"id_anak": "A001"}), (b, {"id_anak": "A001"}), (a, {"kelas": "7A"})):
            tool = "cari_anak" if "kelas" in arguments else "detail_anak"
            assert not (await client.call_tool(tool, arguments)).is_error
            await anyio.sleep(0.01)  # apart by more than the entries' millisecond
        await b.read_resource("asrama://anak/A001")
    return first, second


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    code = cli.main(["audit", *args])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err.splitlines()


async def test_verify_checks_each_file_of_a_folder_and_names_it(
    replica_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = replica_files
    code, out, err = run(capsys, "verify", str(first.parent))
    assert (code, err) == (0, [])
    assert [line.split(": intact: ")[0] for line in out] == [str(first), str(second)]
    assert out[0].split(": intact: ")[1].startswith("2 entries") and out[1].split(": intact: ")[1].startswith("2 ")
    assert run(capsys, "verify", str(second), str(first))[1] == [out[1], out[0]]  # files in the order named


async def test_one_broken_file_fails_verify_and_the_other_is_still_reported_intact(
    replica_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = replica_files
    first.write_bytes(first.read_bytes().splitlines(keepends=True)[1])  # entry #1 deleted
    code, out, err = run(capsys, "verify", str(first.parent))
    assert code == 1
    assert err == [f"{first}: line 1: the chain breaks: its prev is not the genesis value; expected entry #1, found #2:"
                   " entry #1 is missing here (deleted, or lines reordered?)"]  # fmt: skip
    assert len(out) == 1 and out[0].startswith(f"{second}: intact: 2 entries")


async def test_a_folder_of_one_file_reads_as_that_file(
    replica_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first, _ = replica_files
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / first.name).write_bytes(first.read_bytes())
    (alone / "notes.txt").write_text("not an audit file")
    code, out, _ = run(capsys, "verify", str(alone))
    assert code == 0 and out[0].startswith("intact: 2 entries")  # the single-file verdict, unchanged
    assert run(capsys, "verify", str(first))[1] == out


async def test_anchors_need_a_single_file(replica_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    first, second = replica_files
    anchor = f"1:{json.loads(first.read_bytes().splitlines()[0])['hash']}"
    for flag in ("--expect-head", "--since"):
        code, out, err = run(capsys, "verify", flag, anchor, str(first), str(second))
        assert (code, out) == (2, [])
        assert err == ["audit: --expect-head and --since anchor one chain: give a single file"]
    assert run(capsys, "verify", "--since", anchor, str(first))[0] == 0


async def test_who_saw_merges_every_file_by_time_naming_each_entrys_file(
    replica_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = replica_files
    code, out, _ = run(capsys, "who-saw", "A001", str(first.parent))
    saw = [json.loads(line) for line in out]
    assert code == 0
    assert [(e["file"], e["seq"], e["target"]) for e in saw] == [
        (str(first), 1, "detail_anak"),
        (str(second), 1, "detail_anak"),
        (str(first), 2, "cari_anak"),
        (str(second), 2, "asrama://anak/A001"),
    ]
    assert [e["time"] for e in saw] == sorted(e["time"] for e in saw)
    single = [json.loads(line) for line in run(capsys, "who-saw", "A001", str(first))[1]]
    assert [set(e) for e in single] == [{"seq", "time", "subject", "client", "method", "target"}] * 2  # unchanged


async def test_who_changed_merges_every_file_by_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "mcp-1.jsonl", tmp_path / "mcp-2.jsonl"
    base = {"subject": "musyrif-1", "client": "claude", "method": "tools/call", "target": "catat_absensi"}
    written = {one: [("08:00:00", "hadir"), ("08:00:02", "alpa")], two: [("08:00:01", "sakit")]}
    for path, changes in written.items():
        writer = audit_log.AuditLog(path, key=None)
        for clock, new in changes:
            change = {"id": "A001", "old": None, "new": new}
            write = {"confirmation": "accepted", "changes": [change]}
            writer.append({**base, "time": f"2026-12-01T{clock}.000+00:00", "write": write})
    code, out, _ = run(capsys, "who-changed", "A001", str(one), str(two))
    assert code == 0
    assert [(json.loads(line)["file"], json.loads(line)["new"]) for line in out] == [
        (str(one), "hadir"),
        (str(two), "sakit"),
        (str(one), "alpa"),
    ]


async def test_paths_that_hold_no_audit_file_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(capsys, "verify", str(empty)) == (2, [], [f"audit: {empty} holds no *.jsonl audit files"])
    missing = tmp_path / "mcp-9.jsonl"
    assert run(capsys, "who-saw", "A001", str(missing)) == (2, [], [f"audit: {missing} does not exist"])
