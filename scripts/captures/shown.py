"""What each capture runs, by name: the commands as the docs print them, and what is left out of their output
(the lists of a probe, the `_meta` every request repeats), always marked with `…`."""

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.captures.login import deploying_oidc
from scripts.captures.run import Background, Run

LISTS = ("tools/list", "resources/list", "prompts/list")
SERVE = ".venv/bin/mcp-asrama serve"


def _compact(message: Any) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def _short_meta(line: str) -> str:
    """A request of a probe or a typed session with its repeated `_meta` shown as `{…}`."""
    prefix, _, body = line.partition("{")
    message = json.loads("{" + body)
    params = message.get("params", {})
    if "_meta" not in params:
        return line
    params["_meta"] = "…"
    return prefix + _compact(message).replace('"_meta":"…"', '"_meta":{…}')


def probe_lines(printed: str) -> str:
    """A `probe --compact` capture without the three lists, and each call without the `_meta` of the first."""
    shown: list[str] = []
    skip = False
    for line in printed.splitlines():
        if line.startswith(">>> client") and any(f'"method":"{m}"' in line for m in LISTS):
            skip = True
            if shown[-1] != "…":
                shown.append("…")
            continue
        if skip:
            skip = False
            continue
        shown.append(_short_meta(line) if line.startswith(">>> client") and '"id":1,' not in line else line)
    return "\n".join(shown)


def hosts_probe(run: Run) -> dict[str, str]:
    printed = run.sh(
        "ASRAMA_API_URL=http://127.0.0.1:8000 .venv/bin/mcp-asrama probe --compact"
        """ --call cari_anak '{"kelas": "7A", "limit": 2}' \\\n      --call detail_anak '{"id_anak": "A999"}'"""
        f" --call hapus_anak '{{}}' -- {SERVE}"
    )
    return {"hosts-probe": probe_lines(printed)}


ROLL_CALL = {
    "tanggal": "2026-12-01",
    "kamar": "Khadijah 5",
    "yang_lain": "hadir",
    "entri": [{"id_anak": "A078", "status": "izin", "keterangan": "Pulang, acara keluarga"}],
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "terminal", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
}


def _text_cut(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer whose text repeats its structuredContent, that text cut after its first member."""
    result = answer.get("result", {})
    if "structuredContent" in result:
        for part in result["content"]:
            part["text"] = part["text"].split(",")[0] + ",…}"
    return answer


def writes_roll_call(run: Run) -> dict[str, str]:
    line = f"ASRAMA_WRITES=on ASRAMA_AUDIT_LOG=audit.jsonl ASRAMA_API_URL=http://127.0.0.1:8000 {SERVE} 2>server.log"
    server = run.stdio(line)
    typed: list[str] = [f"$ {line}"]
    params: dict[str, Any] = {"name": "catat_absensi", "arguments": ROLL_CALL, "_meta": META}
    first = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    asked = server.ask(first)
    typed += [f">>> {_compact(first)}", f"<<< {_compact(asked)}"]
    if "inputRequests" not in asked.get("result", {}):
        raise RuntimeError(f"the roll call asked no question: {_compact(asked)[:600]}")
    questions = asked["result"]["inputRequests"]
    answers = {key: {"action": "accept", "content": {"setuju": True}} for key in questions}
    state = asked["result"]["requestState"]
    again = {"name": "catat_absensi", "arguments": ROLL_CALL, "inputResponses": answers, "requestState": state}
    retry = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**again, "_meta": META}}
    written = server.ask(retry)
    typed += [_short_meta(f">>> {_compact(retry)}"), f"<<< {_compact(_text_cut(written))}"]
    server.process.stdin.close()  # type: ignore[union-attr]
    server.process.wait(timeout=10)
    typed.append(run.sh(".venv/bin/mcp-asrama audit who-changed A078 audit.jsonl"))
    typed.append(
        run.sh(
            'curl -s -H "Authorization: Bearer $(cat ~/.local/share/mcp-asrama/service-token)"'
            " http://127.0.0.1:8000/absensi/2026-12-01/A078/riwayat"
        )
    )
    return {"writes-roll-call": run.shown("\n".join(typed))}


def deploying_audit(run: Run) -> dict[str, str]:
    verify = ".venv/bin/mcp-asrama audit verify"
    printed = [
        run.sh("mkdir -p keys && ( umask 077; openssl rand -hex 32 > keys/audit.key )"),
        run.sh(
            'ASRAMA_AUDIT_LOG=audit-keyed.jsonl ASRAMA_AUDIT_KEY=keys/audit.key ASRAMA_STDIO_SCOPE="kamar:Aisyah 3" '
            '.venv/bin/mcp-asrama probe \\\n    --call cari_anak \'{"kelas": "7A"}\' --call absensi_harian '
            f'\'{{"tanggal": "2026-10-06", "kelas": "7A"}}\' -- {SERVE} >/dev/null'
        ),
        run.sh("tail -1 audit-keyed.jsonl"),
    ]
    run.hidden[_head(run.folder / "audit-keyed.jsonl")] = "<hash>"
    printed += [
        run.sh(f"{verify} --key keys/audit.key audit-keyed.jsonl"),
        run.sh(".venv/bin/mcp-asrama audit who-saw A008 audit-keyed.jsonl"),
        run.sh(f"{verify} audit-keyed.jsonl", check=False),
        run.sh("head -1 audit-keyed.jsonl > cut.jsonl"),
        run.sh(f"{verify} --key keys/audit.key --expect-head 2:<hash> cut.jsonl", check=False),
    ]
    return {"deploying-audit": "\n".join(printed)}


def _head(log: Path) -> str:
    """The seal of the last line of an audit log."""
    last = json.loads(log.read_text().splitlines()[-1])
    return str(last.get("hmac") or last["hash"])


def deploying_jwt(run: Run) -> dict[str, str]:
    service = run.background(
        "ASRAMA_SERVICE_TOKEN=rahasia-layanan .venv/bin/mcp-asrama service --demo --port 8000", 8000
    )
    idp = run.background(
        ".venv/bin/python -m tests.auth.idp --port 8090 --audience http://127.0.0.1:8001/mcp \\\n"
        "      --scope-claim '[\"kamar:Al-Fatih 1\"]'",
        8090,
    )
    server = run.background(
        "ASRAMA_API_URL=http://127.0.0.1:8000 ASRAMA_API_TOKEN=rahasia-layanan \\\n"
        "  .venv/bin/mcp-asrama serve --transport http --port 8001 \\\n"
        "    --auth jwt --public-url http://127.0.0.1:8001/mcp \\\n"
        "    --auth-issuer http://127.0.0.1:8090/realms/sekolah \\\n"
        "    --auth-jwks-url http://127.0.0.1:8090/realms/sekolah/protocol/openid-connect/certs",
        8001,
    )
    curls = [
        "curl -si http://127.0.0.1:8001/mcp -H 'Content-Type: application/json' \\\n"
        '    -H \'Accept: application/json, text/event-stream\' -d \'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\'',
        "curl -s http://127.0.0.1:8001/.well-known/oauth-protected-resource/mcp",
        "curl -s http://127.0.0.1:8001/healthz; curl -s http://127.0.0.1:8001/readyz",
    ]
    started = "\n\n".join(_startup(process.printed()) for process in (service, idp, server))
    refused = "\n".join(_curl(run, line) for line in curls)
    return {"deploying-jwt-start": started, "deploying-jwt-refused": refused, "deploying-jwt-token": _token(run, idp)}


def _token(run: Run, idp: Background) -> str:
    """The musyrif's token at work: the Inspector's CLI with it, then what the server refuses whatever the token."""
    idp.log.seek(0)
    token = re.search(r"token: +(\S+)", idp.log.read())
    assert token is not None, "the stand-in IdP printed no token"
    run.env["TOKEN"] = token.group(1)
    (run.folder / "2MB.json").write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "a" * 2**21}))
    inspector = (
        'bash scripts/inspector.sh run --cli http://127.0.0.1:8001/mcp --transport http --header "Authorization: Bearer'
        ' $TOKEN" \\\n    --method tools/call --tool-name'
    )
    post = 'curl -s {} http://127.0.0.1:8001/mcp -H "Authorization: Bearer $TOKEN" \\\n    '
    lines = [
        run.shown(f"$ TOKEN={token.group(1)}"),
        run.sh(f"{inspector} cari_anak --tool-arg kelas=7A"),
        run.sh(f"{inspector} daftar_kamar"),
        run.sh(
            post.format("-o /dev/null -w '%{http_code}\\n'")
            + "-H 'Origin: https://evil.example' -H 'Content-Type: application/json' \\\n"
            + "    -H 'Accept: application/json, text/event-stream' "
            + """-d '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'"""
        ),
        run.sh(
            post.format("-w ' %{http_code}\\n'")
            + "-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "
            + "--data-binary @2MB.json"
        ),
    ]
    return "\n".join(lines)


def _startup(printed: str) -> str:
    """A start-up's lines without the log lines of the web server, the SDK and the change feed (their order and
    number depend on timing), each gap marked `…`."""
    shown: list[str] = []
    for line in printed.splitlines():
        logger = json.loads(line).get("logger", "") if line.startswith('{"') else ""
        if logger.startswith(("uvicorn", "mcp.", "mcp_asrama.client")):
            if shown[-1] != "…":
                shown.append("…")
            continue
        shown.append(line)
    return "\n".join(shown)


def _curl(run: Run, line: str) -> str:
    """A curl's capture, the response headers cut to the status line and `www-authenticate`."""
    printed = run.sh(line).replace("\r\n", "\n")
    kept = [
        text
        for text in printed.splitlines()
        if not re.match(r"^[a-z-]+: ", text, re.IGNORECASE) or text.lower().startswith("www-authenticate")
    ]
    return "\n".join(kept)


def first_day_claude_config(run: Run) -> dict[str, str]:
    printed = run.sh(".venv/bin/mcp-asrama claude-config --api-url http://127.0.0.1:8000 2>/dev/null")
    return {"first-day-claude-config": printed.split("\n", 1)[1]}


# Each makes the captures it names from a run of its own; those in OWN_SERVICE start their data service themselves.
CAPTURES: list[Callable[[Run], dict[str, str]]] = [
    hosts_probe,
    writes_roll_call,
    deploying_jwt,
    deploying_audit,
    first_day_claude_config,
    deploying_oidc,
]
OWN_SERVICE = {deploying_jwt, deploying_oidc}
