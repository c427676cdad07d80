"""Anchoring the audit chain: a head or an earlier entry kept elsewhere (`--expect-head`, `--since`), and a key
(ASRAMA_AUDIT_KEY) that turns the chain into an HMAC chain, so that a cut, an append or a rewrite shows."""

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client

from mcp_asrama import cli
from mcp_asrama.server.guard import audit_check, audit_seal
from tests.server.conftest import server_for
from tests.server.guard.test_audit import six_requests

pytestmark = pytest.mark.anyio


def make_key(path: Path, secret: bytes = b"k" * 32, mode: int = 0o600) -> Path:
    path.write_bytes(secret)
    path.chmod(mode)
    return path


@pytest.fixture
def key(tmp_path: Path) -> Path:
    return make_key(tmp_path / "audit.key", os.urandom(32).hex().encode() + b"\n")  # `openssl rand -hex 32`


async def write_six(app: FastAPI, path: Path, key: Path | None = None) -> list[dict[str, Any]]:
    """Six audited requests, one line each."""
    async with Client(server_for(app, audit_log=path, audit_key=key), mode="2026-07-28", cache=None) as client:
        await six_requests(client)
    logged = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert len(logged) == 6
    return logged


def head(entry: dict[str, Any]) -> str:
    return f"{entry['seq']}:{entry.get('hmac') or entry['hash']}"


def rechain(path: Path, edit: int, seal: Any) -> None:
    """A forger's rewrite: edit entry #`edit` (it disclosed nothing), then seal it and every later line anew."""
    rewritten, prev = [], audit_seal.GENESIS
    for line in path.read_bytes().splitlines():
        entry = json.loads(line)
        entry.pop("hash", None)
        entry.pop("hmac", None)
        if entry["seq"] == edit:
            entry["disclosed"] = []
        entry["prev"] = prev
        body, prev = seal(entry)
        rewritten.append(body + b"\n")
    path.write_bytes(b"".join(rewritten))


def sha256_seal(entry: dict[str, Any]) -> tuple[bytes, str]:
    return audit_seal.seal(entry)


def verify_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()  # what went before (a server's log lines)
    code = cli.main(["audit", "verify", *args])
    out = capsys.readouterr()
    assert (out.out == "") != (out.err == "")  # one verdict, on stdout when intact, on stderr otherwise
    return code, (out.out or out.err).strip()


@pytest.fixture
async def six(service_app: FastAPI, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "audit.jsonl"
    return path, await write_six(service_app, path)


# --- anchors ------------------------------------------------------------------------------------------------------


async def test_verify_prints_the_head_ready_to_paste_as_an_anchor(
    six: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, logged = six
    code, verdict = verify_cli(capsys, str(path))
    assert code == 0
    assert verdict == f"intact: 6 entries, chain unbroken from genesis to entry #6; head {head(logged[-1])}"
    assert verify_cli(capsys, "--expect-head", head(logged[-1]), "--since", head(logged[2]), str(path)) == (
        0,
        f"{verdict}; it is the expected head; entry #3 is anchored",
    )
    assert verify_cli(capsys, "--expect-head", logged[-1]["hash"], str(path))[0] == 0  # the hash alone will do


async def test_a_cut_tail_fails_the_expected_head(
    six: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, logged = six
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:4]))
    assert verify_cli(capsys, str(path))[0] == 0  # the chain alone cannot tell

    assert verify_cli(capsys, "--expect-head", head(logged[-1]), str(path)) == (
        1,
        "entry #6 is missing: the log was cut after #4",
    )
    code, verdict = verify_cli(capsys, "--expect-head", logged[-1]["hash"], str(path))
    assert code == 1
    assert verdict == "the expected head is not in the log, which ends at #4: cut, or history rewritten"


async def test_a_forged_line_chained_after_the_head_fails_the_expected_head(
    six: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, logged = six
    forged = {**{k: v for k, v in logged[-1].items() if k != "hash"}, "seq": 7, "prev": logged[-1]["hash"]}
    forged["subject"], forged["disclosed"] = "ust-lain", []
    with path.open("ab") as file:
        file.write(audit_seal.seal(forged)[0] + b"\n")
    assert verify_cli(capsys, str(path))[0] == 0  # correctly chained: the chain alone cannot tell

    assert verify_cli(capsys, "--expect-head", head(logged[-1]), str(path)) == (
        1,
        "entry #7 follows the expected head #6: appended after it (forged, or written since; anchor with --since)",
    )


async def test_a_rewritten_and_rechained_history_fails_an_earlier_anchor(
    six: tuple[Path, list[dict[str, Any]]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, logged = six
    rechain(path, 2, sha256_seal)
    assert verify_cli(capsys, str(path))[0] == 0  # re-chained from genesis: the chain alone cannot tell

    assert verify_cli(capsys, "--since", head(logged[1]), str(path)) == (
        1,
        "entry #2 does not have the anchored hash: history rewritten",
    )
    assert verify_cli(capsys, "--since", f"9:{logged[1]['hash']}", str(path)) == (
        1,
        "entry #9 is missing: the log was cut after #6",
    )
    assert verify_cli(capsys, "--since", head(logged[0]), str(path))[0] == 0  # before the rewrite: still the same


def test_an_anchor_must_be_seq_colon_hash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"")
    for bad in ("abc", "3:xyz", "a" * 64, "0:" + "a" * 64, "-1:" + "a" * 64):
        assert verify_cli(capsys, f"--since={bad}", str(path)) == (
            2,
            f"audit: {bad!r} is not an anchor: give SEQ:HASH as audit verify prints the head",
        )
    assert verify_cli(capsys, "--expect-head", "x" * 64, str(path))[0] == 2


# --- the key ------------------------------------------------------------------------------------------------------


async def test_a_keyed_log_is_sealed_with_hmac_and_verifies_only_with_its_key(
    service_app: FastAPI, tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "audit.jsonl"
    logged = await write_six(service_app, path, key)
    secret = key.read_bytes().strip()
    for raw, entry in zip(path.read_bytes().splitlines(), logged, strict=True):
        assert "hash" not in entry and raw.endswith(b'"hmac":"' + entry["hmac"].encode() + b'"}')
        body = raw[: raw.rindex(b',"hmac":')] + b"}"
        assert hmac.new(secret, body, hashlib.sha256).hexdigest() == entry["hmac"]
    assert [e["prev"] for e in logged[1:]] == [e["hmac"] for e in logged[:-1]]

    code, verdict = verify_cli(capsys, "--key", str(key), "--expect-head", head(logged[-1]), str(path))
    assert code == 0
    assert verdict.startswith("intact: 6 entries sealed with the key, chain unbroken from genesis to entry #6")
    assert verify_cli(capsys, str(path)) == (
        1,
        "line 1: sealed with a key (HMAC): its seal cannot be checked without it; give --key FILE or set "
        "ASRAMA_AUDIT_KEY",
    )
    wrong = make_key(tmp_path / "wrong.key", b"w" * 64)
    assert verify_cli(capsys, "--key", str(wrong), str(path)) == (
        1,
        "line 1: does not match its HMAC: edited, or sealed with another key",
    )
    monkeypatch.setenv("ASRAMA_AUDIT_KEY", str(key))  # the server's setting is the default
    assert verify_cli(capsys, str(path))[0] == 0


async def test_a_rewrite_without_the_key_fails_plain_verify(
    service_app: FastAPI, tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    await write_six(service_app, path, key)
    original = path.read_bytes()

    rechain(path, 3, sha256_seal)  # the forger has no key: plain SHA-256 seals
    assert verify_cli(capsys, "--key", str(key), str(path)) == (
        1,
        "line 1: sealed without the key (plain SHA-256) where the key was given: forged without the key, or an "
        "unkeyed log (verify that without --key)",
    )

    path.write_bytes(original)
    guessed = b"g" * 32
    rechain(path, 3, lambda entry: audit_seal.seal(entry, guessed))  # an HMAC chain under a key of his own
    assert verify_cli(capsys, "--key", str(key), str(path)) == (
        1,
        "line 1: does not match its HMAC: edited, or sealed with another key",
    )

    path.write_bytes(original)
    raw = path.read_bytes().splitlines(keepends=True)
    raw[3] = raw[3].replace(b'"A001"', b'"A004"')  # an edit in place, without re-sealing
    path.write_bytes(b"".join(raw))
    assert verify_cli(capsys, "--key", str(key), str(path))[1] == (
        "line 4: does not match its HMAC: edited, or sealed with another key"
    )


async def test_a_torn_tail_of_a_keyed_log_is_marked_and_verifies_with_the_key(
    service_app: FastAPI, tmp_path: Path, key: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "audit.jsonl"
    await write_six(service_app, path, key)
    path.write_bytes(path.read_bytes()[:-30])  # the crash: line 6 cut mid-write
    assert verify_cli(capsys, "--key", str(key), str(path))[1].startswith("line 6: torn")

    async with Client(server_for(service_app, audit_log=path, audit_key=key), mode="legacy", cache=None) as client:
        await client.call_tool("detail_anak", {"id_anak": "A003"})

    marker, call = (json.loads(line) for line in path.read_bytes().splitlines()[6:])
    assert (marker["event"], "hmac" in marker, call["seq"], call["prev"]) == ("torn_tail", True, 7, marker["hmac"])
    code, verdict = verify_cli(capsys, "--key", str(key), str(path))
    assert code == 0, verdict
    assert verdict.endswith("; line 6 is an interrupted write (crash), acknowledged by line 7")


@pytest.mark.parametrize(
    ("secret", "mode", "problem"),
    [
        (b"k" * 31, 0o600, "holds 31 bytes; at least 32 are needed (e.g. openssl rand -hex 32)"),
        (b"k" * 31 + b"\n", 0o600, "holds 31 bytes; at least 32 are needed (e.g. openssl rand -hex 32)"),
        (b"k" * 64, 0o640, "is accessible to group or others (mode 0o640): chmod 600 it"),
        (b"k" * 64, 0o604, "is accessible to group or others (mode 0o604): chmod 600 it"),
    ],
)
def test_a_short_or_shared_key_file_is_refused_at_start(
    service_app: FastAPI, tmp_path: Path, secret: bytes, mode: int, problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = make_key(tmp_path / "audit.key", secret, mode)
    with pytest.raises(audit_seal.AuditConfigError) as refused:
        server_for(service_app, audit_log=tmp_path / "audit.jsonl", audit_key=key)
    assert str(refused.value) == f"ASRAMA_AUDIT_KEY {key} {problem}"
    assert not (tmp_path / "audit.jsonl").exists()

    (tmp_path / "audit.jsonl").write_bytes(b"")
    assert verify_cli(capsys, "--key", str(key), str(tmp_path / "audit.jsonl")) == (2, f"audit: {refused.value}")


def test_a_missing_key_file_is_refused_at_start(service_app: FastAPI, tmp_path: Path) -> None:
    with pytest.raises(audit_seal.AuditConfigError, match="cannot be read"):
        server_for(service_app, audit_log=tmp_path / "audit.jsonl", audit_key=tmp_path / "nowhere.key")


async def test_a_log_never_mixes_keyed_and_unkeyed_entries(service_app: FastAPI, tmp_path: Path, key: Path) -> None:
    plain, keyed = tmp_path / "plain.jsonl", tmp_path / "keyed.jsonl"
    await write_six(service_app, plain)
    await write_six(service_app, keyed, key)
    before = plain.read_bytes(), keyed.read_bytes()

    with pytest.raises(audit_seal.AuditConfigError) as refused:
        server_for(service_app, audit_log=plain, audit_key=key)
    assert str(refused.value) == (
        f"ASRAMA_AUDIT_LOG {plain} holds entries sealed without a key, but ASRAMA_AUDIT_KEY is set: a log never "
        f"mixes both. Start a new file: move {plain} aside (keep its head: mcp-asrama audit verify {plain}), "
        "then start again"
    )
    with pytest.raises(
        audit_seal.AuditConfigError, match="holds entries sealed with a key, but ASRAMA_AUDIT_KEY is not"
    ):
        server_for(service_app, audit_log=keyed)
    other = make_key(tmp_path / "other.key", b"o" * 32)
    with pytest.raises(
        audit_seal.AuditConfigError, match="its last entries do not match ASRAMA_AUDIT_KEY: another key"
    ):
        server_for(service_app, audit_log=keyed, audit_key=other)
    assert (plain.read_bytes(), keyed.read_bytes()) == before

    plain.rename(tmp_path / "plain.1.jsonl")  # the admin moves it aside: a new, keyed file starts
    await write_six(service_app, plain, key)
    assert audit_check.verify(plain, key=audit_seal.load_key(key))[0]
