"""`mcp-asrama probe --tanya`: a confirmed write from the terminal, run as a person would — the probe's console
script against `mcp-asrama serve` over stdio with ASRAMA_WRITES=on and a real data service process, in each era:
2026-07-28 (`input_required`, then the retry with the answer) and the handshake (`elicitation/create`)."""

import io
import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp_types import ElicitRequestFormParams, ElicitRequestURLParams

from mcp_asrama.ops.probe import Asker
from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE

pytestmark = pytest.mark.e2e

HARI = "2026-10-07"  # a school day without records in the tutorial's data
KONFIRMASI = "mcp_asrama.server.features.write:keputusan_catat_absensi"
ROLL_CALL = {
    "tanggal": HARI,
    "kamar": "Al-Fatih 1",
    "yang_lain": "hadir",
    "entri": [{"id_anak": "A002", "status": "izin", "keterangan": "Pulang, acara keluarga"}],
}
WRITTEN = {"A001": "hadir", "A002": "izin"}
QUESTION = "- Budi Santoso (A002): belum dicatat → izin (Pulang, acara keluarga)"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
TIMEOUT = 120.0  # a shared machine: generous


@pytest.fixture
def writes_env(server_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    return {**server_env, "ASRAMA_WRITES": "on", "ASRAMA_AUDIT_LOG": str(tmp_path / "audit.jsonl")}


def command(era: str, *tanya: str) -> list[str]:
    """The probe making the roll call in `era` with the `--tanya` flags given."""
    legacy = ["--legacy"] if era == "legacy" else []
    call = ["--call", "catat_absensi", json.dumps(ROLL_CALL)]
    return [EXECUTABLE, "probe", "--compact", *legacy, *tanya, *call, "--", EXECUTABLE, "serve"]


def messages(capture: str) -> list[tuple[str, dict[str, Any]]]:
    """The probe's compact capture as (direction, message)."""
    found = []
    for line in capture.splitlines():
        direction, _, text = line.partition(" {")
        if direction in (">>> client", "<<< server"):
            found.append((direction, json.loads("{" + text)))
    return found


def recorded(service: str) -> dict[str, str]:
    """The day's records as the data service holds them (its REST API, its token): id → status."""
    answer = httpx2.get(f"{service}/absensi", params={"tanggal": HARI}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200, answer.text
    return {row["id_anak"]: row["status"] for row in answer.json()["data"]}


def outcome(capture: list[tuple[str, dict[str, Any]]]) -> str:
    """The `hasil` of the roll call's final result."""
    results = [m["result"] for d, m in capture if d == "<<< server" and "structuredContent" in m.get("result", {})]
    return str(results[-1]["structuredContent"]["hasil"])


def asked_the_era_way(capture: list[tuple[str, dict[str, Any]]], era: str, answer: dict[str, Any]) -> None:
    """The question came as the era asks, and the probe's answer went back the same way."""
    sent = [m for d, m in capture if d == ">>> client"]
    got = [m for d, m in capture if d == "<<< server"]
    if era == "legacy":
        assert sent[0]["method"] == "initialize" and "form" in sent[0]["params"]["capabilities"]["elicitation"]
        [question] = [m for m in got if m.get("method") == "elicitation/create"]
        assert QUESTION in question["params"]["message"].splitlines()
        [reply] = [m for m in sent if m.get("id") == question["id"] and "result" in m]
        assert reply["result"] == answer
    else:
        calls = [m for m in sent if m.get("method") == "tools/call"]
        meta = calls[0]["params"]["_meta"][CAPABILITIES]
        assert "form" in meta["elicitation"]
        [first] = [m["result"] for m in got if m.get("result", {}).get("resultType") == "input_required"]
        assert QUESTION in first["inputRequests"][KONFIRMASI]["params"]["message"].splitlines()
        [retry] = [c for c in calls if "inputResponses" in c["params"]]
        assert retry["params"]["inputResponses"] == {KONFIRMASI: answer}
        assert retry["params"]["requestState"] == first["requestState"]


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_tanya_y_writes_the_roll_call(writes_env: dict[str, str], live_service: str, era: str) -> None:
    done = subprocess.run(command(era, "--tanya", "y"), env=writes_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    capture = messages(done.stdout)
    asked_the_era_way(capture, era, {"action": "accept", "content": {"setuju": True}})
    assert outcome(capture) == "ditulis"
    assert QUESTION in done.stderr.splitlines() and "Setujui? [y/N] y (--tanya y)" in done.stderr
    assert QUESTION not in done.stdout.splitlines()  # the question is shown on stderr; stdout is only the capture
    assert recorded(live_service) == WRITTEN


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_tanya_n_writes_nothing(writes_env: dict[str, str], live_service: str, era: str) -> None:
    done = subprocess.run(command(era, "--tanya", "n"), env=writes_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    capture = messages(done.stdout)
    asked_the_era_way(capture, era, {"action": "decline"})
    assert outcome(capture) == "ditolak"
    assert recorded(live_service) == {}


def test_an_answer_typed_at_the_terminal_writes(writes_env: dict[str, str], live_service: str, tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    shown = b""
    with (
        (tmp_path / "capture.txt").open("w") as out,
        subprocess.Popen(
            command("2026-07-28", "--tanya"), env=writes_env, stdin=terminal, stdout=out, stderr=terminal
        ) as process,
    ):
        os.close(terminal)
        deadline = time.monotonic() + TIMEOUT
        answered = False
        while process.poll() is None and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.2)[0]:
                try:
                    shown += os.read(controller, 4096)
                except OSError:  # the terminal's other end is closed: the probe has ended
                    break
            if not answered and shown.endswith(b"Setujui? [y/N] "):
                os.write(controller, b"y\n")
                answered = True
        process.wait(timeout=TIMEOUT)
    os.close(controller)
    assert answered, shown.decode(errors="replace")
    assert process.returncode == 0, shown.decode(errors="replace")
    assert QUESTION in shown.decode()
    assert outcome(messages((tmp_path / "capture.txt").read_text())) == "ditulis"
    assert recorded(live_service) == WRITTEN


@pytest.mark.parametrize(
    ("piped", "answer", "hasil", "written"),
    [
        ("ya\n", {"action": "accept", "content": {"setuju": True}}, "ditulis", WRITTEN),
        ("", {"action": "cancel"}, "dibatalkan", {}),  # the end of input: nobody answered
    ],
)
def test_an_answer_piped_to_stdin(
    writes_env: dict[str, str],
    live_service: str,
    piped: str,
    answer: dict[str, Any],
    hasil: str,
    written: dict[str, str],
) -> None:
    done = subprocess.run(
        command("legacy", "--tanya"), env=writes_env, input=piped, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    capture = messages(done.stdout)
    asked_the_era_way(capture, "legacy", answer)
    assert outcome(capture) == hasil
    shown = "Setujui? [y/N] ya" if piped else "--- tidak ada jawaban: dibatalkan"
    assert shown in done.stderr.splitlines()
    assert recorded(live_service) == written


def test_without_tanya_the_probe_declares_no_elicitation(writes_env: dict[str, str], live_service: str) -> None:
    done = subprocess.run(command("2026-07-28"), env=writes_env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    sent = [m for d, m in messages(done.stdout) if d == ">>> client" and m.get("method") == "tools/call"]
    assert sent and all("elicitation" not in m["params"]["_meta"][CAPABILITIES] for m in sent)
    assert "Setujui?" not in done.stderr
    assert recorded(live_service) == {}


def test_a_form_other_than_the_confirmation_or_a_url_is_shown_and_declined() -> None:
    prompt = io.StringIO()
    asker = Asker("y", io.StringIO(), prompt)
    schema = {"type": "object", "properties": {"alasan": {"type": "string"}}, "required": ["alasan"]}
    form = ElicitRequestFormParams(message="Tulis alasannya", requested_schema=schema)
    url = ElicitRequestURLParams(message="Masuk dulu", url="https://contoh.sch.id/masuk", elicitation_id="e1")

    async def answers() -> list[str]:
        return [(await asker(None, params)).action for params in (form, url)]  # type: ignore[arg-type]

    assert anyio.run(answers) == ["decline", "decline"]
    shown = prompt.getvalue()
    assert '"alasan"' in shown and "https://contoh.sch.id/masuk" in shown and "Setujui?" not in shown
