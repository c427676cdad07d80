"""The real login docs/deploying.md shows: the demo's data service, oidc-provider with a users file, our server
requiring its tokens, and mcp-remote under the Inspector's CLI, which prints the authorization URL. The person at
the browser is the tests' own (tests/e2e/test_mcp_remote_oauth.py: she logs in and consents at the provider's
development pages, then lands on the bridge's callback); a second start must find the bridge's tokens and log in
no more. Needs oidc-provider, mcp-remote and the Inspector (their scripts install them with npm on first use).
The bridge's own log lines (its pid, the browsers it tried, the messages it relays) are cut to `…`."""

import re
from pathlib import Path

import anyio
from scripts.captures.run import Run, free_port, wait_for
from tests.auth.oidc.support import Person
from tests.e2e.test_mcp_remote_oauth import AUTHORIZE, DESKTOP, LOGIN_TIMEOUT, log_in

NAMES = ("deploying-oidc-login", "deploying-oidc-result")
CALLBACK = "33418"  # the bridge's callback port as shown
PROVIDER = "bash scripts/oidc-provider.sh run"
BRIDGE = "bash scripts/inspector.sh run --cli{} bash scripts/mcp-remote.sh run http://127.0.0.1:8001/mcp 33418"
VARYING = re.compile(r"\b(client_id|code_challenge|state)=[^&\s]+")


def deploying_oidc(run: Run) -> dict[str, str]:
    """The four terminals, the login at the browser, then what the first and a second start printed."""
    callback = free_port()
    run.hidden[str(callback)] = CALLBACK
    run.env["BROWSER"] = "true"  # no desktop: "opening the browser" opens none, the bridge's printed URL is used
    for desktop in DESKTOP:
        run.env.pop(desktop, None)
    service = run.background(
        "ASRAMA_SERVICE_TOKEN=rahasia-layanan .venv/bin/mcp-asrama service --demo --port 8000", 8000
    )
    users = run.sh("""echo '{"ridwan": {"asrama_scope": ["kamar:Al-Fatih 1"]}}' > users.json""")
    provider = run.background(
        f"OIDC_PORT=8090 OIDC_RESOURCE=http://127.0.0.1:8001/mcp OIDC_USERS=users.json {PROVIDER}", 8090
    )
    server = run.background(
        "ASRAMA_API_URL=http://127.0.0.1:8000 ASRAMA_API_TOKEN=rahasia-layanan \\\n"
        "  .venv/bin/mcp-asrama serve --transport http --port 8001 \\\n"
        "    --auth jwt --public-url http://127.0.0.1:8001/mcp \\\n"
        "    --auth-issuer http://127.0.0.1:8090 --auth-jwks-url http://127.0.0.1:8090/jwks",
        8001,
    )
    first = run.background(
        BRIDGE.format(" --connect-timeout 90000 \\\n   ")
        + " --method tools/call --tool-name cari_anak --tool-arg kelas=7A"
    )
    wait_for(callback, first.process, timeout=LOGIN_TIMEOUT)  # it listens once it has tried to open a browser
    anyio.run(_login, Path(first.log.name), run.typed(f"http://localhost:{CALLBACK}/oauth/callback"))
    first.process.wait(timeout=LOGIN_TIMEOUT)
    asked = _unencoded(run, first.printed(settle=0))
    again = _unencoded(run, run.sh(BRIDGE.format("") + " --method tools/call --tool-name daftar_kamar"))
    if asked.count("Please authorize") != 1 or "Please authorize" in again:
        raise RuntimeError(f"not one login, then none:\n{asked}\n{again}")
    terminals = [
        _cut(service.printed(settle=0)),
        f"{users}\n{_cut(provider.printed(settle=0), 'ready ')}",
        _cut(server.printed(settle=0)),
        _login_url(asked),
    ]
    result = _result(asked)
    shown_result = result[result.index('  "structuredContent": {') :]
    text = next(line for line in _result(again) if line.lstrip().startswith('"text": '))
    return {
        NAMES[0]: "\n\n".join(terminals),
        NAMES[1]: "\n".join(["…", *shown_result, again.split("\n")[0], "…", text, "…"]),
    }


async def _login(log: Path, redirect_uri: str) -> None:
    """Ridwan at the browser, with the URL the bridge printed."""
    with anyio.fail_after(LOGIN_TIMEOUT):
        await log_in(Person("ridwan", redirect_uri), log, redirect_uri)


def _unencoded(run: Run, printed: str) -> str:
    """`printed` with this run's ports inside URL-encoded URLs shown too, and the login's per-run values as
    placeholders."""
    for shown_port, port in run.ports.items():
        printed = printed.replace(f"127.0.0.1%3A{port}", f"127.0.0.1%3A{shown_port}")
    return VARYING.sub(lambda m: f"{m[1]}=<{m[1].replace('_', '-')}>", printed)


def _cut(printed: str, keep: str = "") -> str:
    """The command (with its continuation lines) and, of what it printed, only the first line starting with `keep`
    (none without one), the rest cut to `…`."""
    lines = printed.split("\n")
    end = next(i for i, line in enumerate(lines) if not line.endswith("\\")) + 1
    command, output = lines[:end], lines[end:]
    at = next((i for i, line in enumerate(output) if keep and line.startswith(keep)), len(output))
    shown = [*command, *(["…"] if at else []), *output[at : at + 1], *(["…"] if at + 1 < len(output) else [])]
    return "\n".join(shown)


def _login_url(printed: str) -> str:
    """The bridge's command and the authorization URL it printed, its other lines cut."""
    match = AUTHORIZE.search(printed)
    assert match is not None
    command = _cut(printed).removesuffix("\n…")
    return "\n".join([command, "…", "Please authorize this client by visiting:", match[1], "…"])


def _result(printed: str) -> list[str]:
    """The lines of the Inspector's answer (a JSON object from `{` to `}` at the start of a line)."""
    lines = printed.splitlines()
    start = lines.index("{")
    return lines[start : lines.index("}", start) + 1]
