"""`claude-config --api-url` to a data service on another machine: one warning line on stderr saying what the
service token grants that PC, and pointing to the remote connector; none for a service on this machine."""

import json
from pathlib import Path

import pytest

from mcp_asrama.cli import main


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *flags: str) -> tuple[int, str, str]:
    monkeypatch.delenv("ASRAMA_API_URL", raising=False)
    monkeypatch.delenv("ASRAMA_API_TOKEN", raising=False)
    code = main(["claude-config", *flags])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("url", "host"),
    [("https://data.sekolah.example", "data.sekolah.example"), ("http://10.0.0.5:8000", "10.0.0.5")],
)
def test_a_service_on_another_machine_is_warned_about_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str, host: str
) -> None:
    code, out, err = run(capsys, monkeypatch, "--api-url", url)
    assert code == 0 and json.loads(out)["mcpServers"]["asrama"]["env"]["ASRAMA_API_URL"] == url
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0] == (
        "claude-config: warning: the service token lets this PC read every child's record (NIK, phone, address) "
        f"from {host}; for a staff member's PC use the remote connector instead (claude-config --remote "
        "https://<server>/mcp, docs/staff-devices.md)"
    )


def test_the_warning_is_said_for_the_url_from_the_environment_too(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASRAMA_API_URL", "https://data.sekolah.example")
    assert main(["claude-config"]) == 0
    assert capsys.readouterr().err.count("warning: the service token lets this PC read every child's record") == 1


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_a_service_on_this_machine_gets_no_warning(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    code, _, err = run(capsys, monkeypatch, "--api-url", url)
    assert code == 0 and "warning" not in err
    assert "paste into" in err


def test_the_remote_connector_itself_is_not_warned_about(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run(capsys, monkeypatch, "--remote", "https://asrama.sekolah.sch.id/mcp")
    assert code == 0 and "warning" not in err


def test_the_page_it_points_to_says_how_to_add_the_connector() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "staff-devices.md"
    assert "Settings → Connectors" in page.read_text()
