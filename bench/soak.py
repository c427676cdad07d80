"""Soak with faults: clients through nginx against the replica topology (scripts/cluster.sh) while replicas and
PostgreSQL are killed, then the invariants checked against the database and nginx's logs.

A script, not a test (pytest never collects it; tests/e2e/test_cluster.py runs a 60-second version). In one run:

1. `scripts/cluster.sh up` in a state dir of its own: PostgreSQL, Redis, 2 data service + 2 MCP replicas, nginx,
   the demo school;
2. `--clients` workers, each an SDK `Client` on protocol 2026-07-28 at nginx's MCP_URL, mix reads (cari_anak,
   absensi_harian, detail_anak, daftar_kamar, the asrama://kamar resource), confirmed roll calls (catat_absensi of
   the worker's own student on one of four soak dates, the note a unique tag) and izin (ajukan_izin for its other
   student, a day of its own in 2040+, the reason the tag); 15% of confirmations are declined. A write whose call
   fails is sent again (a new confirmation) until it gets an answer: a roll call already written is then
   "tetap", an izin already written a conflict. Four listeners hold `subscriptions/listen` on the soak dates'
   asrama://absensi/{tanggal}, listen again whenever a stream is lost, and go on 20 s after the load stops;
3. faults, one after the other: at 25% of the run `mcp-1` gets SIGKILL and is started again after 3 s, at 45%
   `service-2` alike, at 65% PostgreSQL is shut down (immediate) for 10 s; the load goes on at least 5 s after the
   last one is back;
4. the invariants: each accepted write is in the database exactly once (one history row or izin per tag),
   nothing is written for a declined one, each listener was told of each roll call after it was committed (a
   notification for its date, or a listen acknowledged after the commit: the listener refetches), no
   response in nginx's logs is a 5xx other than a 503 while PostgreSQL is down (up to 15 s after); each MCP
   replica's audit chain is intact (`mcp-asrama audit verify`), the killed one's too.

The checks and the report are in bench/soak_checks.py. Prints a markdown report on stdout (progress on stderr)
and writes the JSON with --json; exits 1 when an invariant breaks, 2 when the cluster does not come up.

    .venv/bin/python bench/soak.py                      # 10 minutes, 16 clients
    .venv/bin/python bench/soak.py --duration 60        # what CI runs
"""

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import ElicitResult

import common
import soak_checks as checks
from soak_checks import Stats

CLUSTER = common.REPO / "scripts" / "cluster.sh"
MODERN = "2026-07-28"
SOAK_DATES = [date(2001, 1, d) for d in (1, 2, 3, 4)]
LISTENERS = 4
DECLINE = 0.15
WRITE_GIVE_UP = 90.0  # seconds a write is sent again before it counts as unresolved
LISTEN_SETTLE = 20.0  # seconds the listeners go on after the load stopped
CALL_TIMEOUT = 30.0  # seconds a call may take before it counts as failed


@dataclass
class Cluster:
    """The running topology: what `cluster.sh up` printed, and every PID it ever had."""

    env: dict[str, str]
    values: dict[str, str]
    pids: set[int] = field(default_factory=set)

    def run(self, *args: str) -> dict[str, str]:
        done = subprocess.run([str(CLUSTER), *args], env=self.env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"cluster.sh {' '.join(args)} failed: {done.stderr[-2000:]}")
        lines = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        self.pids |= {int(v) for k, v in lines.items() if k.startswith("PID_") and v.isdigit()}
        return lines


def error_kind(result: Any = None, exc: BaseException | None = None) -> str:
    """A short name for a failure: the JSON-RPC code, the exception type, or the tool error's gist."""
    if isinstance(exc, MCPError):
        return f"jsonrpc {exc.error.code} {exc.error.message[:50]}"
    if exc is not None:
        return type(exc).__name__
    text = result.content[0].text if result.content else ""
    for words, kind in (("tidak menjawab", "tool: service timeout"), ("tidak tersedia", "tool: service down")):
        if words in text:
            return kind
    return "tool: " + " ".join(text.split()[:5])


class Worker:
    """One client: its own students, its own counter of tags, one SDK client at nginx."""

    def __init__(self, n: int, url: str, students: list[str], run: str, stats: Stats) -> None:
        self.n, self.url, self.run, self.stats = n, url, run, stats
        self.rollcall_student, self.izin_student = students[2 * n], students[2 * n + 1]
        self.others = students
        self.count = 0
        self.accept = True

    async def person(self, ctx: Any, params: Any) -> ElicitResult:
        if self.accept:
            return ElicitResult(action="accept", content={"setuju": True})
        return ElicitResult(action="decline")

    async def call(self, client: Client, kind: str, name: str, arguments: dict[str, Any]) -> Any:
        """One timed call; the result when it is not an error, else None (recorded by kind)."""
        start = time.time()
        try:
            if name == "resource":
                result = await client.read_resource("asrama://kamar")
                self.stats.calls.append((start, time.time(), kind, None))
                return result
            result = await client.call_tool(name, arguments)
        except Exception as exc:  # every failure is counted by kind; the soak goes on
            self.stats.calls.append((start, time.time(), kind, error_kind(exc=exc)))
            return None
        self.stats.calls.append((start, time.time(), kind, error_kind(result) if result.is_error else None))
        return result

    async def read(self, client: Client) -> None:
        reads: list[tuple[str, dict[str, Any]]] = [
            ("cari_anak", {"kelas": "7A", "limit": 20}),
            ("absensi_harian", {"tanggal": date.today().isoformat()}),
            ("detail_anak", {"id_anak": random.choice(self.others)}),
            ("daftar_kamar", {}),
            ("resource", {}),
        ]
        name, arguments = random.choice(reads)
        await self.call(client, "read", name, arguments)

    async def write(self, client: Client, kind: str) -> None:
        """A roll call or an izin, sent again after a failure until it is answered (or WRITE_GIVE_UP)."""
        self.count += 1
        tag = f"soak-{self.run}-{self.n}-{self.count}"
        self.accept = random.random() >= DECLINE
        tanggal = random.choice(SOAK_DATES)
        if kind == "rollcall":
            entri = [
                {
                    "id_anak": self.rollcall_student,
                    "status": random.choice(["hadir", "sakit", "alpa"]),
                    "keterangan": tag,
                }
            ]
            arguments: dict[str, Any] = {"tanggal": tanggal.isoformat(), "entri": entri}
        else:
            day = (date(2040, 1, 1) + timedelta(days=2 * self.count)).isoformat()
            arguments = {"id_anak": self.izin_student, "dari": day, "sampai": day, "jenis": "pulang", "alasan": tag}
        op = self.stats.ops[tag] = {"kind": kind, "accept": self.accept, "outcome": "unresolved", "date": tanggal}
        deadline, attempts = time.monotonic() + WRITE_GIVE_UP, 0
        while time.monotonic() < deadline:
            attempts += 1
            result = await self.call(client, kind, "catat_absensi" if kind == "rollcall" else "ajukan_izin", arguments)
            hasil = (
                (result.structured_content or {}).get("hasil") if result is not None and not result.is_error else None
            )
            conflict = result is not None and result.is_error and "bertabrakan" in result.content[0].text
            if hasil is not None or (conflict and attempts > 1):
                op["outcome"] = hasil or "conflict after a retry"
                return
            await asyncio.sleep(min(2.0, 0.25 * attempts))

    async def loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async with Client(
                    self.url,
                    mode=MODERN,
                    cache=None,
                    elicitation_callback=self.person,
                    read_timeout_seconds=CALL_TIMEOUT,
                ) as client:
                    while not stop.is_set():
                        pick = random.random()
                        if pick < 0.6:
                            await self.read(client)
                        else:
                            await self.write(client, "rollcall" if pick < 0.85 else "izin")
            except Exception as exc:  # a broken client is rebuilt
                self.stats.calls.append((time.time(), time.time(), "client", error_kind(exc=exc)))
                await asyncio.sleep(0.5)


async def listener(n: int, url: str, stats: Stats, stop: asyncio.Event) -> None:
    """Listen to the soak dates until LISTEN_SETTLE seconds after the load stopped (a notification may come late: a
    replica's feed resumes after PostgreSQL is back); listen again (a new acknowledgment) whenever a stream is lost."""
    uris = [f"asrama://absensi/{d.isoformat()}" for d in SOAK_DATES]

    async def listening() -> None:
        while stats.listen_supported is not False:
            await listen_once(n, url, uris, stats)

    task = asyncio.create_task(listening())
    await stop.wait()
    await asyncio.wait([task], timeout=LISTEN_SETTLE)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def listen_once(n: int, url: str, uris: list[str], stats: Stats) -> None:
    """One listen stream, its acknowledgment and notifications recorded, until it ends or fails."""
    try:
        async with (
            Client(url, mode=MODERN, cache=None) as client,
            client.listen(resource_subscriptions=uris) as subscription,
        ):
            stats.listen_supported = True
            stats.acks[n].append(time.time())
            async for event in subscription:
                if isinstance(event, ResourceUpdated):
                    stats.heard[n].append((time.time(), event.uri))
    except (ListenNotSupportedError, MCPError) as exc:
        if stats.listen_supported is None and (isinstance(exc, ListenNotSupportedError) or exc.error.code == -32601):
            stats.listen_supported = False
            return
    except Exception as exc:  # SubscriptionLost, a replica or nginx gone: listen again
        stats.lost[type(exc).__name__] += 1
    await asyncio.sleep(0.5)


async def faults(cluster: Cluster, duration: float, began: float, stats: Stats) -> None:
    """SIGKILL an MCP replica, then a service replica, then stop PostgreSQL for 10 s; each started again."""
    plan = [(0.25, "mcp-1", 3.0), (0.45, "service-2", 3.0), (0.65, "postgres", 10.0)]
    for at, name, down in plan:
        await asyncio.sleep(max(0.0, began + at * duration - time.time()))
        start = time.time()
        await asyncio.to_thread(cluster.run, "kill", name)
        await asyncio.sleep(down)
        await asyncio.to_thread(cluster.run, "start", name)
        stats.faults.append(
            {"fault": f"{name} {'stopped' if name == 'postgres' else 'SIGKILL'}", "start": start, "back": time.time()}
        )
        common.log(f"soak: {name} killed and back after {time.time() - start:.1f} s")


async def soak(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    values, run, stats = cluster.values, secrets.token_hex(3), Stats(listeners=LISTENERS)
    async with httpx2.AsyncClient(
        base_url=values["SERVICE_URL"], headers={"Authorization": f"Bearer {values['SERVICE_TOKEN']}"}
    ) as http:
        answer = (await http.get("/anak", params={"limit": 100})).raise_for_status().json()
    students = [a["id"] for a in answer["data"]]
    if len(students) < 2 * args.clients:
        raise RuntimeError(f"{len(students)} students: too few for {args.clients} clients")
    began = time.time()
    stop = asyncio.Event()
    workers = [Worker(n, values["MCP_URL"], students, run, stats) for n in range(args.clients)]
    common.log(f"soak: run {run}, {args.clients} clients for {args.duration:.0f} s")

    async def load_then_stop() -> None:  # the load runs --duration, and at least 5 s past the last fault's end
        await faults(cluster, args.duration, began, stats)
        await asyncio.sleep(max(5.0, began + args.duration - time.time()))
        stop.set()

    await asyncio.gather(
        *(w.loop(stop) for w in workers),
        *(listener(n, values["MCP_URL"], stats, stop) for n in range(LISTENERS)),
        load_then_stop(),
    )
    elapsed = max((end for _, end, _, _ in stats.calls), default=time.time()) - began  # the listeners' settle aside
    broken, committed = checks.check_database(values["DB_URL"], run, stats)
    misses, latencies = checks.check_listeners(stats, committed) if stats.listen_supported else ([], [])
    return checks.report(
        stats,
        args,
        elapsed,
        broken,
        misses,
        latencies,
        checks.check_nginx(Path(cluster.env["ASRAMA_CLUSTER_DIR"]), stats),
        checks.check_audit(values["AUDIT_LOGS"].split(",")),
    )


def main() -> int:
    parser = common.parser(__doc__)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load (default 600)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument("--state", type=Path, help="the cluster's state dir (default: a new temporary folder)")
    args = parser.parse_args()
    if args.duration < 30 or not 1 <= args.clients <= 50:
        parser.error("--duration must be at least 30 s (the faults need it) and --clients 1 to 50")
    state = args.state or Path(tempfile.mkdtemp(prefix="asrama-soak-"))
    cluster = Cluster({**os.environ, "ASRAMA_CLUSTER_DIR": str(state)}, {})
    try:
        try:
            cluster.values = cluster.run("up")
        except RuntimeError as exc:
            common.log(f"soak: {exc}")
            return 2
        result = asyncio.run(soak(cluster, args))
    finally:
        cluster.run("down")
    result["pids"] = sorted(cluster.pids)
    print(checks.markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1))
    return 0 if all(v is not False for v in result["invariants"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
