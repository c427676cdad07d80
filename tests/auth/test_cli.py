"""`mcp-asrama serve --transport http` and its authentication settings: unsafe or broken configurations refuse to
start with one clear line and exit code 2; flags and environment agree."""

import subprocess
from pathlib import Path

import pytest

from mcp_asrama import cli
from mcp_asrama.server.settings import ServerSettings
from tests.auth.idp import new_rsa_key, public_pem
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port

ISSUER = "https://sso.example.sch.id/realms/sekolah"
PUBLIC = "https://asrama.example.sch.id/mcp"


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    assert err.startswith("configuration error: ")
    return err


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10"])  # noqa: S104
def test_public_bind_without_auth_refuses_to_start(host: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(["serve", "--transport", "http", "--host", host, "--port", str(free_port())], capsys)
    assert f"refusing to serve children's data on {host} without authentication" in err
    assert "ASRAMA_AUTH=jwt" in err


def test_public_bind_from_the_environment_refuses_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASRAMA_TRANSPORT", "http")
    monkeypatch.setenv("ASRAMA_MCP_HOST", "0.0.0.0")  # noqa: S104
    assert "without authentication" in _refused(["serve"], capsys)


def test_jwt_without_issuer_or_public_url_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(["serve", "--transport", "http", "--auth", "jwt", "--auth-jwks-url", f"{ISSUER}/certs"], capsys)
    assert "ASRAMA_PUBLIC_URL and ASRAMA_AUTH_ISSUER" in err


def test_jwt_with_both_or_neither_key_source_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = ["serve", "--transport", "http", "--auth", "jwt", "--public-url", PUBLIC, "--auth-issuer", ISSUER]
    assert "exactly one of" in _refused(base, capsys)
    both = [*base, "--auth-jwks-url", f"{ISSUER}/certs", "--auth-public-key-file", str(tmp_path / "k.pem")]
    assert "exactly one of" in _refused(both, capsys)


def test_unreadable_key_file_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    argv = ["serve", "--transport", "http", "--auth", "jwt", "--public-url", PUBLIC, "--auth-issuer", ISSUER]
    err = _refused([*argv, "--auth-public-key-file", str(tmp_path / "missing.pem")], capsys)
    assert "ASRAMA_AUTH_PUBLIC_KEY_FILE" in err and "cannot read" in err


def test_issuer_that_is_not_a_url_refuses(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    key = tmp_path / "k.pem"
    key.write_bytes(public_pem(new_rsa_key()))
    argv = ["serve", "--transport", "http", "--auth", "jwt", "--public-url", PUBLIC, "--auth-issuer", "sekolah"]
    assert "ASRAMA_AUTH_ISSUER must be" in _refused([*argv, "--auth-public-key-file", str(key)], capsys)


def test_public_url_must_be_a_url(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "--transport", "http", "--auth", "jwt", "--public-url", "asrama", "--auth-issuer", ISSUER]
    assert "public_url" in _refused([*argv, "--auth-jwks-url", f"{ISSUER}/certs"], capsys)


def test_every_serve_flag_maps_to_its_setting() -> None:
    args = cli.build_parser().parse_args(
        [
            "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "9000", "--auth", "jwt",  # noqa: S104
            "--public-url", PUBLIC, "--auth-issuer", ISSUER, "--auth-jwks-url", f"{ISSUER}/certs",
            "--auth-scope-claim", "peran", "--allowed-origins", "https://a.example, https://b.example",
        ]
    )  # fmt: skip
    overrides = {field: getattr(args, flag) for flag, field in cli.SERVE_FLAGS.items()}
    settings = ServerSettings(**{k: v for k, v in overrides.items() if v is not None})
    assert (settings.mcp_host, settings.mcp_port, settings.auth) == ("0.0.0.0", 9000, "jwt")  # noqa: S104
    assert (str(settings.public_url), settings.auth_issuer) == (PUBLIC, ISSUER)
    assert str(settings.auth_jwks_url) == f"{ISSUER}/certs"
    assert settings.auth_scope_claim == "peran"
    assert settings.allowed_origins == ["https://a.example", "https://b.example"]


@pytest.mark.e2e
def test_console_script_refuses_a_public_bind_without_auth(tmp_path: Path) -> None:
    done = subprocess.run(
        [EXECUTABLE, "serve", "--transport", "http", "--host", "0.0.0.0"],  # noqa: S104
        env=clean_env(XDG_DATA_HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("configuration error: refusing to serve children's data on 0.0.0.0")
    assert "Traceback" not in done.stderr


def test_an_audit_key_without_an_audit_log_refuses_to_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "audit.key"
    key.write_bytes(b"k" * 40)
    key.chmod(0o600)
    monkeypatch.setenv("ASRAMA_AUDIT_KEY", str(key))
    assert "set ASRAMA_AUDIT_LOG too" in _refused(["serve"], capsys)


def test_an_unusable_audit_key_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = tmp_path / "audit.key"
    key.write_bytes(b"pendek")
    key.chmod(0o600)
    monkeypatch.setenv("ASRAMA_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("ASRAMA_AUDIT_KEY", str(key))
    assert "at least 32 are needed" in _refused(["serve"], capsys)


def test_an_empty_audit_key_setting_means_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASRAMA_AUDIT_KEY", "")
    assert ServerSettings().audit_key is None
