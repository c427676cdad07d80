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
   asrama://absensi/{tanggal} and listen again whenever a stream is lost;
3. faults: at 25% of the run `mcp-1` gets SIGKILL and is started again after 3 s, at 45% `service-2` alike, at
   65% PostgreSQL is shut down (immediate) for 10 s;
4. the invariants: each accepted write is in the database exactly once (one history row or izin per tag),
   nothing is written for a declined one, each listener was told of each roll call after it was committed (a
   notification for its date, or a listen acknowledged after the commit: the listener refetches), and no
   response in nginx's logs is a 5xx other than a 503 while PostgreSQL is down (up to 15 s after).

Prints a markdown report on stdout (progress on stderr) and writes the JSON with --json; exits 1 when an
invariant breaks, 2 when the cluster does not come up.

    .venv/bin/python bench/soak.py                      # 10 minutes, 16 clients
    .venv/bin/python bench/soak.py --duration 60        # what CI runs
"""

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any


def _bench_mcp() -> ModuleType:
    """bench/mcp.py, for its percentile. Loading it drops this folder from sys.path (under its own name the file
    would shadow the SDK), so `import mcp` below is the SDK."""
    spec = importlib.util.spec_from_file_location("bench_mcp", Path(__file__).with_name("mcp.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


percentile = _bench_mcp().percentile

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.subscriptions import ListenNotSupportedError  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.shared.subscriptions import ResourceUpdated  # noqa: E402
from mcp_types import ElicitResult  # noqa: E402
from sqlalchemy import create_engine, func, select  # noqa: E402

from mcp_asrama.service.models import Izin, RiwayatAbsensi  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLUSTER = ROOT / "scripts" / "cluster.sh"
MODERN = "2026-07-28"
SOAK_DATES = [date(2001, 1, d) for d in (1, 2, 3, 4)]
LISTENERS = 4
DECLINE = 0.15
WRITE_GIVE_UP = 90.0  # seconds a write is sent again before it counts as unresolved
CALL_TIMEOUT = 30.0  # seconds a call may take before it counts as failed
PG_GRACE = 15.0  # seconds after PostgreSQL is back during which a 503 is still expected


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


@dataclass
class Stats:
    calls: list[tuple[float, float, str, str | None]] = field(default_factory=list)  # start, end, kind, error
    ops: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> {kind, accept, outcome, date}
    heard: dict[int, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))
    acks: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    faults: list[dict[str, Any]] = field(default_factory=list)
    lost: Counter[str] = field(default_factory=Counter)  # listen streams that ended by failure, by kind
    listen_supported: bool | None = None


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

    async def loop(self, until: float) -> None:
        while time.time() < until:
            try:
                async with Client(
                    self.url,
                    mode=MODERN,
                    cache=None,
                    elicitation_callback=self.person,
                    read_timeout_seconds=CALL_TIMEOUT,
                ) as client:
                    while time.time() < until:
                        pick = random.random()
                        if pick < 0.6:
                            await self.read(client)
                        else:
                            await self.write(client, "rollcall" if pick < 0.85 else "izin")
            except Exception as exc:  # a broken client is rebuilt
                self.stats.calls.append((time.time(), time.time(), "client", error_kind(exc=exc)))
                await asyncio.sleep(0.5)


async def listener(n: int, url: str, stats: Stats, until: float) -> None:
    """Listen to the soak dates until `until`; listen again (a new acknowledgment) whenever the stream is lost."""
    uris = [f"asrama://absensi/{d.isoformat()}" for d in SOAK_DATES]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(until - time.time()):
            while stats.listen_supported is not False:
                await listen_once(n, url, uris, stats)


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
        print(f"soak: {name} killed and back after {time.time() - start:.1f} s", file=sys.stderr)


def spread(samples: list[float], scale: float = 1.0) -> dict[str, float]:
    """n, p50 and p99 of `samples` (times `scale`), rounded."""
    if len(samples) < 2:
        return {"n": len(samples), "p50": round(sum(samples) * scale, 1), "p99": round(sum(samples) * scale, 1)}
    return {
        "n": len(samples),
        "p50": round(percentile(samples, 50) * scale, 1),
        "p99": round(percentile(samples, 99) * scale, 1),
    }


def check_database(db_url: str, run: str, stats: Stats) -> tuple[dict[str, Any], dict[str, float]]:
    """Rows per tag in the database against what each op was answered; the commit time of each roll call."""
    engine = create_engine(db_url)
    like = f"soak-{run}-%"
    with engine.connect() as conn:
        history = conn.execute(
            select(RiwayatAbsensi.keterangan_baru, func.count(), func.min(RiwayatAbsensi.waktu))
            .where(RiwayatAbsensi.keterangan_baru.like(like))
            .group_by(RiwayatAbsensi.keterangan_baru)
        ).all()
        izin = conn.execute(select(Izin.alasan, func.count()).where(Izin.alasan.like(like)).group_by(Izin.alasan)).all()
    engine.dispose()
    rows = {str(tag): n for tag, n, _ in history} | {str(tag): n for tag, n in izin}
    committed = {str(tag): when.timestamp() for tag, _, when in history}
    broken: dict[str, list[str]] = defaultdict(list)
    for tag, op in stats.ops.items():
        found = rows.get(tag, 0)
        if op["accept"] and op["outcome"] != "unresolved" and found != 1:
            broken["accepted, not written exactly once"].append(f"{tag}: {found}")
        elif not op["accept"] and found:
            broken["written without an accept"].append(f"{tag}: {found}")
        elif found > 1:
            broken["written more than once"].append(f"{tag}: {found}")
    for tag in set(rows) - set(stats.ops):
        broken["written by no op"].append(tag)
    return dict(broken), committed


def check_listeners(stats: Stats, committed: dict[str, float]) -> tuple[list[str], list[float]]:
    """Each listener, for each roll call committed: a notification for its date after the commit, or a listen
    acknowledged after it. Returns the misses and the delivery latencies (commit → first notification after)."""
    misses, latencies = [], []
    changes = [
        (committed[tag], f"asrama://absensi/{op['date'].isoformat()}", tag)
        for tag, op in stats.ops.items()
        if op["kind"] == "rollcall" and tag in committed
    ]
    for n in range(LISTENERS):
        first_ack = min(stats.acks[n], default=float("inf"))
        for when, uri, tag in changes:
            if when < first_ack:
                continue  # before this listener first listened (its first read covers it)
            heard = [t for t, u in stats.heard[n] if u == uri and t >= when - 0.05]
            if heard:
                latencies.append(min(heard) - when)
            elif not any(t >= when for t in stats.acks[n]):
                misses.append(f"listener {n}: {tag}")
    return misses, latencies


def check_nginx(state: Path, stats: Stats) -> tuple[Counter[str], Counter[str]]:
    """From nginx's access logs: the 5xx responses other than 503s while PostgreSQL was down (plus PG_GRACE), and
    every response of 400 or more, by entry (mcp, service) and status."""
    windows = [(f["start"], f["back"] + PG_GRACE) for f in stats.faults if f["fault"].startswith("postgres")]
    bad: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for log in sorted((state / "log").glob("nginx-asrama-*.access.log")):
        entry = log.name.removeprefix("nginx-asrama-").removesuffix(".access.log")
        for line in log.read_text().splitlines():
            parts = line.split()
            when = datetime.strptime(f"{parts[1]} {parts[2]}", "[%d/%b/%Y:%H:%M:%S %z]").timestamp()
            status = parts[4]
            if status >= "400":
                seen[f"{entry} {status}"] += 1
            if status.startswith("5") and not (status == "503" and any(a - 1 <= when <= b for a, b in windows)):
                bad[f"{entry} {status}"] += 1
    return bad, seen


def report(
    stats: Stats,
    args: argparse.Namespace,
    elapsed: float,
    broken: dict[str, Any],
    misses: list[str],
    latencies: list[float],
    nginx: tuple[Counter[str], Counter[str]],
) -> dict[str, Any]:
    bad_5xx, statuses = nginx
    by_kind: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    for start, end, kind, error in stats.calls:
        if error is None:
            by_kind[kind].append((end - start) * 1000)
        else:
            errors[f"{kind}: {error}"] += 1
    for fault, following in zip(stats.faults, [*stats.faults[1:], None], strict=True):
        window_end = min(fault["back"] + 30, following["start"] if following else float("inf"))
        failed = [end for start, end, _, error in stats.calls if error and fault["start"] <= start <= window_end]
        fault["errors"] = len(failed)
        fault["recovery_s"] = round(max(0.0, max(failed, default=fault["back"]) - fault["back"]), 2)
        fault["down_s"] = round(fault.pop("back") - fault.pop("start"), 2)
    outcomes = Counter(
        f"{op['kind']} {'accepted' if op['accept'] else 'declined'}: {op['outcome']}" for op in stats.ops.values()
    )
    listens: dict[str, Any] = {"status": "not yet measured (the server does not serve subscriptions/listen)"}
    if stats.listen_supported:
        listens = {
            "status": "measured",
            "listeners": LISTENERS,
            "notifications": sum(map(len, stats.heard.values())),
            "listens acknowledged": sum(map(len, stats.acks.values())),
            "streams lost": dict(stats.lost),
            "delivery ms": spread(latencies, 1000),
        }
    invariants = {
        "every accepted write in the database exactly once; none without an accept": not broken,
        "every listener told of every roll call": not misses if stats.listen_supported else None,
        "no 5xx but 503 while PostgreSQL is down": not bad_5xx,
    }
    return {
        "duration_s": round(elapsed, 1),
        "clients": args.clients,
        "calls": len(stats.calls),
        "calls_per_s": round(len(stats.calls) / elapsed, 1),
        "latency_ms": {k: spread(v) for k, v in sorted(by_kind.items())},
        "errors": dict(errors.most_common()),
        "nginx_statuses_400_up": dict(sorted(statuses.items())),
        "writes": dict(sorted(outcomes.items())),
        "faults": stats.faults,
        "listens": listens,
        "invariants": invariants,
        "violations": {**broken, "listeners not told": misses[:20], "5xx": dict(bad_5xx)},
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Soak: {result['duration_s']} s, {result['clients']} clients, {result['calls']} calls "
        f"({result['calls_per_s']}/s)",
        "",
        "| calls | n | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {k} | {v['n']} | {v['p50']} | {v['p99']} |" for k, v in result["latency_ms"].items()]
    lines += ["", "| fault | s until healthy again | failed calls | recovery s |", "|---|---:|---:|---:|"]
    lines += [f"| {f['fault']} | {f['down_s']} | {f['errors']} | {f['recovery_s']} |" for f in result["faults"]]
    lines += ["", "| errors by kind | n |", "|---|---:|"] + [f"| {k} | {n} |" for k, n in result["errors"].items()]
    lines += ["", "| nginx responses ≥ 400 | n |", "|---|---:|"]
    lines += [f"| {k} | {n} |" for k, n in result["nginx_statuses_400_up"].items()]
    lines += ["", "| writes | n |", "|---|---:|"] + [f"| {k} | {n} |" for k, n in result["writes"].items()]
    lines += [
        "",
        f"Listens: {json.dumps(result['listens'], ensure_ascii=False)}",
        "",
        "| invariant | holds |",
        "|---|---|",
    ]
    lines += [
        f"| {k} | {'yes' if v else 'not measured' if v is None else '**NO**'} |"
        for k, v in result["invariants"].items()
    ]
    return "\n".join(lines)


async def soak(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    values, run, stats = cluster.values, secrets.token_hex(3), Stats()
    async with httpx2.AsyncClient(
        base_url=values["SERVICE_URL"], headers={"Authorization": f"Bearer {values['SERVICE_TOKEN']}"}
    ) as http:
        answer = (await http.get("/anak", params={"limit": 100})).raise_for_status().json()
    students = [a["id"] for a in answer["data"]]
    if len(students) < 2 * args.clients:
        raise RuntimeError(f"{len(students)} students: too few for {args.clients} clients")
    began = time.time()
    until = began + args.duration
    workers = [Worker(n, values["MCP_URL"], students, run, stats) for n in range(args.clients)]
    print(f"soak: run {run}, {args.clients} clients for {args.duration:.0f} s", file=sys.stderr)
    await asyncio.gather(
        *(w.loop(until) for w in workers),
        *(listener(n, values["MCP_URL"], stats, until + 5) for n in range(LISTENERS)),
        faults(cluster, args.duration, began, stats),
    )
    elapsed = time.time() - began
    broken, committed = check_database(values["DB_URL"], run, stats)
    misses, latencies = check_listeners(stats, committed) if stats.listen_supported else ([], [])
    return report(
        stats, args, elapsed, broken, misses, latencies, check_nginx(Path(cluster.env["ASRAMA_CLUSTER_DIR"]), stats)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
            print(f"soak: {exc}", file=sys.stderr)
            return 2
        result = asyncio.run(soak(cluster, args))
    finally:
        cluster.run("down")
    result["pids"] = sorted(cluster.pids)
    print(markdown(result))
    if args.json:
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=1))
    return 0 if all(v is not False for v in result["invariants"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
