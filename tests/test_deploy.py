"""deploy/: the nginx site passes `nginx -t` and agrees with the units' ports; the systemd units pass
`systemd-analyze verify`; the env file names only real settings and validates; and the units' own command lines,
with the env file, start a data service and an MCP replica (JWT auth) that answer a tool call."""

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_asrama.config import ServiceSettings
from mcp_asrama.server.settings import ServerSettings
from tests.auth.idp import Idp
from tests.auth.support import MODERN, bearer_client
from tests.conftest import TOKEN, TUTORIAL_ABSENSI, TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
SITE = DEPLOY / "nginx" / "asrama.conf"
UNITS = {kind: DEPLOY / "systemd" / f"mcp-asrama-{kind}@.service" for kind in ("service", "mcp")}
ENV_EXAMPLE = DEPLOY / "asrama.env.example"
INSTALLED = "/opt/mcp-asrama/bin/mcp-asrama"
STATE = "/var/lib/mcp-asrama"
PER_REPLICA = {"ASRAMA_SERVICE_PORT", "ASRAMA_SERVICE_HOST", "ASRAMA_MCP_PORT", "ASRAMA_MCP_HOST", "ASRAMA_AUDIT_LOG"}


def env_file(text: str) -> dict[str, str]:
    """NAME=value lines of a systemd environment file (comments and blank lines skipped)."""
    pairs = (line.split("=", 1) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return {name.strip(): value.strip() for name, value in pairs}


def unit_lines(path: Path, key: str, instance: str = "1") -> list[str]:
    """Every value of `key=` in a unit (keys may repeat), with the instance specifier %i filled in."""
    prefix = f"{key}="
    return [
        line[len(prefix) :].replace("%i", instance) for line in path.read_text().splitlines() if line.startswith(prefix)
    ]


def setting_names(model: type[ServerSettings] | type[ServiceSettings]) -> set[str]:
    """The environment names of a settings class (ASRAMA_ + the field, or its alias)."""
    return {
        str(field.validation_alias) if field.validation_alias else f"ASRAMA_{name.upper()}"
        for name, field in model.model_fields.items()
    }


def site_block(name: str) -> str:
    """The body of `upstream NAME { ... }` in the nginx site."""
    found = re.search(rf"upstream {name} \{{(.*?)\}}", SITE.read_text(), re.S)
    assert found, f"no upstream {name}"
    return found.group(1)


def test_the_nginx_site_passes_nginx_t(tmp_path: Path) -> None:
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed (bash scripts/nginx-for-tests.sh)")
    site = tmp_path / "asrama.conf"
    site.write_text(SITE.read_text().replace("/var/log/nginx/", f"{tmp_path}/"))
    main = tmp_path / "nginx.conf"
    main.write_text(
        f"pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log; events {{}}\n"
        f"http {{ proxy_temp_path {tmp_path}/proxy; client_body_temp_path {tmp_path}/body; include {site}; }}\n"
    )
    checked = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(main)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert "syntax is ok" in checked.stderr


def test_the_nginx_upstreams_are_the_units_ports_and_the_env_files_api_url() -> None:
    service_port = env_file(ENV_EXAMPLE.read_text())["ASRAMA_API_URL"].rsplit(":", 1)[1]
    for kind, upstream in (("service", "asrama_service"), ("mcp", "asrama_mcp")):
        ports = {
            env_file("\n".join(unit_lines(UNITS[kind], "Environment", n)))[f"ASRAMA_{kind.upper()}_PORT"] for n in "12"
        }
        assert set(re.findall(r"server 127\.0\.0\.1:(\d+)", site_block(upstream))) == ports
        assert "keepalive" in site_block(upstream)
    assert f"listen 127.0.0.1:{service_port};" in SITE.read_text()


def test_both_nginx_servers_stream_unbuffered_with_long_reads_and_limited_bodies() -> None:
    servers = SITE.read_text().split("\nserver {")[1:]
    assert len(servers) == 2
    for server in servers:
        for directive in (
            "proxy_buffering off;",
            "proxy_http_version 1.1;",
            'proxy_set_header Connection "";',
            "proxy_read_timeout 3600s;",
            "client_max_body_size 1m;",
            "proxy_next_upstream error timeout",
        ):
            assert directive in server
        assert "$request " not in server and "$request_uri" not in server  # no query string (names) in logs


@pytest.mark.parametrize("kind", ["service", "mcp"])
def test_the_systemd_units_pass_systemd_analyze_verify(kind: str, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    (tmp_path / "asrama.env").write_text(ENV_EXAMPLE.read_text())
    unit = tmp_path / UNITS[kind].name
    text = UNITS[kind].read_text().replace(INSTALLED, EXECUTABLE)  # the installed path does not exist here
    unit.write_text(text.replace("/etc/mcp-asrama/asrama.env", str(tmp_path / "asrama.env")))
    checked = subprocess.run(
        [analyze, "verify", str(tmp_path / unit.name.replace("@", "@1"))], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr
    assert unit.name not in checked.stderr, checked.stderr  # unknown keys and bad values are only warnings


def test_the_env_file_names_only_real_settings_and_no_per_replica_one() -> None:
    names = set(env_file(ENV_EXAMPLE.read_text()))
    known = setting_names(ServerSettings) | setting_names(ServiceSettings)
    assert names - known == set()
    assert names & PER_REPLICA == set()
    for kind in UNITS:
        assert {e.split("=")[0] for e in unit_lines(UNITS[kind], "Environment")} - known - {"XDG_DATA_HOME"} == set()


def test_the_env_file_validates_for_both_programs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    values = env_file(ENV_EXAMPLE.read_text())
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ASRAMA_AUDIT_KEY", str(tmp_path / "audit.key"))
    server = ServerSettings(transport="http")
    assert server.auth == "jwt" and server.writes and len(server.state_keys) == 1
    assert ServiceSettings().token == values["ASRAMA_SERVICE_TOKEN"]


@pytest.fixture
def idp() -> Iterator[Idp]:
    with Idp() as provider:
        provider.add_key("k1")
        yield provider


def replica(kind: str, values: dict[str, str], ports: dict[str, int], state: Path) -> tuple[list[str], dict[str, str]]:
    """A unit's command line and environment as systemd would build them for instance 1 (Environment= first, the
    env file over it), with the installed program, the state folder and fixed ports replaced by the test's."""
    env = env_file("\n".join(unit_lines(UNITS[kind], "Environment")).replace(STATE, str(state)))
    for name, port in ports.items():
        if name in env:
            env[name] = str(port)
    [command] = unit_lines(UNITS[kind], "ExecStart")
    return command.replace(INSTALLED, EXECUTABLE).split(), clean_env(**env, **values)


@pytest.mark.anyio
async def test_the_units_command_lines_start_a_working_service_and_mcp_replica(idp: Idp, tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'asrama.db'}"
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=TUTORIAL_ABSENSI)
    ports = {"ASRAMA_SERVICE_PORT": free_port(), "ASRAMA_MCP_PORT": free_port()}
    public_url = f"http://127.0.0.1:{ports['ASRAMA_MCP_PORT']}/mcp"
    (tmp_path / "audit.key").write_text("kunci-audit-sekolah-yang-cukup-panjang\n")
    (tmp_path / "audit.key").chmod(0o600)
    values = env_file(ENV_EXAMPLE.read_text()) | {  # the example, with what only this machine can give
        "ASRAMA_DB_URL": db_url,
        "ASRAMA_SERVICE_TOKEN": TOKEN,
        "ASRAMA_API_TOKEN": TOKEN,
        "ASRAMA_API_URL": f"http://127.0.0.1:{ports['ASRAMA_SERVICE_PORT']}",  # nginx's entry, in production
        "ASRAMA_PUBLIC_URL": public_url,
        "ASRAMA_AUTH_ISSUER": idp.issuer,
        "ASRAMA_AUTH_JWKS_URL": idp.jwks_url,
        "ASRAMA_CONFIRM_STORAGE": "memory://",
        "ASRAMA_RATE_LIMIT_STORAGE": "memory://",
        "ASRAMA_AUDIT_KEY": str(tmp_path / "audit.key"),
    }
    processes = []
    try:
        for kind, port in (("service", ports["ASRAMA_SERVICE_PORT"]), ("mcp", ports["ASRAMA_MCP_PORT"])):
            command, env = replica(kind, values, ports, tmp_path)
            log = tmp_path / f"{kind}.log"
            processes.append(start(command, env, log))
            wait_until_up(port, processes[-1], log)
        async with bearer_client(public_url, idp.mint(public_url), MODERN) as client:
            found = await client.call_tool("cari_anak", {"kelas": "7A"})
        assert not found.is_error
        assert found.structured_content is not None and found.structured_content["total"] == 2
    finally:
        for process in reversed(processes):
            stop(process)
    assert (tmp_path / "audit-1.jsonl").read_text().count("cari_anak") == 1  # instance 1's own chain
