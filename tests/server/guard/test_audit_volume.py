"""The audit log is no disk-fill weapon: only what can disclose or change data is chained, and a low disk warns."""

import json
import logging
import warnings
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client, MCPDeprecationWarning
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, Request, Result

from mcp_asrama.server.guard import audit, audit_file, audit_log
from tests.server.conftest import server_for

pytestmark = pytest.mark.anyio


def methods(path: Path) -> list[str]:
    return [json.loads(line)["method"] for line in path.read_bytes().splitlines()]


async def test_a_flood_of_pings_and_lists_writes_no_audit_line(service_app: FastAPI, tmp_path: Path, era: str) -> None:
    path = tmp_path / "audit.jsonl"
    async with Client(server_for(service_app, audit_log=path), mode=era, cache=None) as client:
        for _ in range(100):
            await client.list_tools()
            await client.list_prompts()
            await client.list_resources()
            await client.list_resource_templates()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # both removed in 2026-07-28
            for _ in range(100):
                with suppress(MCPError):  # -32601 on the modern path: still not audited
                    await client.send_ping()
                with suppress(MCPError):  # not served (no logging capability): -32601
                    await client.set_logging_level("info")
        assert not path.exists()  # the handshake (initialize / server/discover) neither

        await client.call_tool("daftar_kamar", {})
    assert methods(path) == ["tools/call"]


async def test_methods_that_can_disclose_and_unknown_methods_are_audited(service_app: FastAPI, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    async with Client(server_for(service_app, audit_log=path), mode="legacy", cache=None) as client:
        with pytest.raises(MCPError):
            await client.complete(
                PromptReference(type="ref/prompt", name="laporan_kamar"), {"name": "nama_kamar", "value": "Al"}
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource("asrama://anak/A001")
        with pytest.raises(MCPError):
            await client.session.send_request(Request[Any, Any](method="anak/hapus", params=None), Result)
    assert methods(path) == ["completion/complete", "resources/subscribe", "anak/hapus"]
    assert audit.audited("subscriptions/listen") and not audit.audited("server/discover")


# --- free space -----------------------------------------------------------------------------------------------


def low_space_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == audit_file.__name__ and r.getMessage() == audit_file.LOW_SPACE]


def test_low_free_space_warns_at_most_once_per_interval(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The real file system's free space, with a threshold above any disk's size."""
    caplog.set_level(logging.WARNING, logger=audit_file.__name__)
    log = audit_log.AuditLog(tmp_path / "audit.jsonl", space=audit_file.FreeSpace(min_bytes=2**62, every=3600))
    for n in range(20):
        log.append({"time": "t", "event": "request", "method": "tools/call", "n": n})

    [warning] = low_space_warnings(caplog)
    assert warning.levelno == logging.WARNING
    assert warning.__dict__["path"] == str(tmp_path / "audit.jsonl")
    assert 0 < warning.__dict__["free_bytes"] < 2**62
    assert 0 <= warning.__dict__["free_percent"] <= 100
    assert len(methods(tmp_path / "audit.jsonl")) == 20  # warned, never refused


def test_low_free_space_warns_again_after_the_interval(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=audit_file.__name__)
    log = audit_log.AuditLog(tmp_path / "audit.jsonl", space=audit_file.FreeSpace(min_ratio=1.01, every=0))
    for n in range(3):
        log.append({"time": "t", "event": "request", "method": "tools/call", "n": n})
    assert len(low_space_warnings(caplog)) == 3


def test_enough_free_space_warns_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=audit_file.__name__)
    log = audit_log.AuditLog(tmp_path / "audit.jsonl", space=audit_file.FreeSpace(min_bytes=0, min_ratio=0, every=0))
    log.append({"time": "t", "event": "request", "method": "tools/call"})
    assert low_space_warnings(caplog) == []


async def test_a_server_on_a_nearly_full_disk_warns_and_still_answers(
    service_app: FastAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=audit_file.__name__)
    path = tmp_path / "audit.jsonl"
    server = server_for(service_app, audit_log=path)
    [auditor] = [m for m in server.middleware if isinstance(m, audit.Auditor)]
    auditor.log.space = audit_file.FreeSpace(min_bytes=2**62)
    async with Client(server, mode="2026-07-28", cache=None) as client:
        for _ in range(5):
            assert not (await client.call_tool("detail_anak", {"id_anak": "A001"})).is_error
    assert len(low_space_warnings(caplog)) == 1
    assert methods(path) == ["tools/call"] * 5
