"""No child's name in any log line, at any level: the data service, the stdio server and the HTTP server, all at
DEBUG as real processes, asked for children by name; their stderr shows route and URI templates instead."""

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import TOKEN
from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Demo:
    """The data service on demo data, and the name of one of its children."""

    url: str
    log: Path
    name: str  # first and last name, e.g. "Prayoga Lestari"

    def forms(self) -> list[str]:
        """The ways the name could reach a log: as typed, without the space, URL-encoded, its longest part."""
        parts = self.name.split()
        return [self.name, "".join(parts), quote(self.name), self.name.replace(" ", "+"), max(parts, key=len)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    folder = tmp_path_factory.mktemp("demo")
    db = folder / "demo.db"
    port = free_port()
    log = folder / "service.log"
    env = clean_env(ASRAMA_SERVICE_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))
    command = [
        EXECUTABLE,
        "--log-level",
        "DEBUG",
        "service",
        "--demo",
        "--port",
        str(port),
        "--buat",
        "--db",
        f"sqlite:///{db}",
    ]
    process = start(command, env, log)
    try:
        wait_until_up(port, process, log)
        with sqlite3.connect(db) as conn:
            names = [row[0] for row in conn.execute("SELECT nama FROM anak ORDER BY id")]
        # A name whose parts are long enough not to turn up in a log line by chance.
        name = next(n for n in names if len(n.split()) == 2 and min(len(p) for p in n.split()) >= 4)
        yield Demo(f"http://127.0.0.1:{port}", log, name)
    finally:
        stop(process)


def server_env(demo: Demo, folder: Path) -> dict[str, str]:
    return clean_env(ASRAMA_API_URL=demo.url, ASRAMA_API_TOKEN=TOKEN, XDG_DATA_HOME=str(folder))


def assert_no_name(text: str, demo: Demo) -> None:
    for form in demo.forms():
        assert form not in text, f"{form!r} is in the log"


def reads_by_name(demo: Demo) -> list[tuple[str, dict[str, Any]]]:
    """Requests naming a child: resources with the name as id (with its space, without), a name search."""
    return [
        ("resources/read", {"uri": f"asrama://anak/{demo.name}"}),
        ("resources/read", {"uri": f"asrama://anak/{''.join(demo.name.split())}"}),
        ("resources/read", {"uri": f"asrama://anak/{quote(demo.name)}/x"}),
        ("tools/call", {"name": "cari_anak", "arguments": {"nama": demo.name}}),
        ("tools/call", {"name": "detail_anak", "arguments": {"id_anak": demo.name}}),
    ]


def test_the_service_logs_route_templates_never_a_childs_name(demo: Demo) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for path in (f"/anak/{demo.name}", f"/anak/{''.join(demo.name.split())}", f"/anak?nama={quote(demo.name)}"):
        httpx2.get(demo.url + path, headers=headers, timeout=5)
    found = httpx2.get(f"{demo.url}/anak", params={"nama": demo.name}, headers=headers, timeout=5).json()
    assert found["total"] >= 1
    text = demo.log.read_text()
    assert_no_name(text, demo)
    assert '"route": "/anak/{id_anak}"' in text and '"route": "/anak"' in text


def test_the_stdio_server_at_debug_logs_uri_templates_never_a_childs_name(demo: Demo, tmp_path: Path) -> None:
    log = tmp_path / "stdio.log"
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    requests = [("initialize", init), *reads_by_name(demo)]
    answers = []
    with log.open("w") as stderr:
        command = [EXECUTABLE, "--log-level", "DEBUG", "serve"]
        env = server_env(demo, tmp_path)
        with subprocess.Popen(command, env=env, stdin=PIPE, stdout=PIPE, stderr=stderr, text=True) as process:
            assert process.stdin is not None and process.stdout is not None
            for number, (method, params) in enumerate(requests):
                process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}))
                process.stdin.write("\n" if number else '\n{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
                process.stdin.flush()
                answers.append(json.loads(process.stdout.readline()))
            process.stdin.close()
            process.wait(timeout=10)
    assert "error" in answers[1] and "error" in answers[2]  # no child has the name as id
    assert answers[4]["result"]["structuredContent"]["total"] >= 1  # the name search reached the service
    text = log.read_text()
    assert_no_name(text, demo)
    assert "asrama://anak/{id_anak}" in text
    assert_no_name(demo.log.read_text(), demo)


@pytest.mark.anyio
async def test_the_http_server_at_debug_logs_templates_never_a_childs_name(demo: Demo, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "http.log"
    command = [EXECUTABLE, "--log-level", "DEBUG", "serve", "--transport", "http", "--port", str(port)]
    process = start(command, server_env(demo, tmp_path), log)
    try:
        wait_until_up(port, process, log)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy", cache=None) as client:
            for method, params in reads_by_name(demo):
                if method == "resources/read":
                    with pytest.raises(MCPError):
                        await client.read_resource(params["uri"])
                else:
                    await client.call_tool(params["name"], params["arguments"])
    finally:
        stop(process)
    text = log.read_text()
    assert_no_name(text, demo)
    assert "asrama://anak/{id_anak}" in text and '"route": "/mcp"' in text
    assert_no_name(demo.log.read_text(), demo)
