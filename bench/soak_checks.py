"""What bench/soak.py saw, and whether the invariants held: the record of calls, writes, notifications and faults;
the checks against the database and nginx's access logs; the report as JSON and markdown."""

import argparse
import json
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, select

import common
from mcp_asrama.service.models import Izin, RiwayatAbsensi

PG_GRACE = 15.0  # seconds after PostgreSQL is back during which a 503 is still expected


@dataclass
class Stats:
    """Everything the soak recorded (times are `time.time()`)."""

    listeners: int
    calls: list[tuple[float, float, str, str | None]] = field(default_factory=list)  # start, end, kind, error
    ops: dict[str, dict[str, Any]] = field(default_factory=dict)  # tag -> {kind, accept, outcome, date}
    heard: dict[int, list[tuple[float, str]]] = field(default_factory=lambda: defaultdict(list))
    acks: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    faults: list[dict[str, Any]] = field(default_factory=list)
    lost: Counter[str] = field(default_factory=Counter)  # listen streams that ended by failure, by kind
    listen_supported: bool | None = None


def spread(samples: list[float], scale: float = 1.0) -> dict[str, float]:
    """n, p50 and p99 of `samples` (times `scale`), rounded (none: 0)."""
    if not samples:
        return {"n": 0, "p50": 0.0, "p99": 0.0}
    return {"n": len(samples), **{f"p{p}": round(common.percentile(samples, p) * scale, 1) for p in (50, 99)}}


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
    for n in range(stats.listeners):
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


def check_audit(files: list[str]) -> list[str]:
    """`mcp-asrama audit verify` over every replica's audit file (each its own chain; each killed replica's too):
    the verdicts of the chains that broke."""
    done = subprocess.run([common.EXECUTABLE, "audit", "verify", *files], capture_output=True, text=True, check=False)
    return [] if done.returncode == 0 else (done.stderr.strip() or done.stdout.strip()).splitlines()


def report(
    stats: Stats,
    args: argparse.Namespace,
    elapsed: float,
    broken: dict[str, Any],
    misses: list[str],
    latencies: list[float],
    nginx: tuple[Counter[str], Counter[str]],
    audit: list[str],
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
            "listeners": stats.listeners,
            "notifications": sum(map(len, stats.heard.values())),
            "listens acknowledged": sum(map(len, stats.acks.values())),
            "streams lost": dict(stats.lost),
            "delivery ms": spread(latencies, 1000),
        }
    invariants = {
        "every accepted write in the database exactly once; none without an accept": not broken,
        "every listener told of every roll call": not misses if stats.listen_supported else None,
        "no 5xx but 503 while PostgreSQL is down": not bad_5xx,
        "every replica's audit chain intact": not audit,
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
        "violations": {**broken, "listeners not told": misses[:20], "5xx": dict(bad_5xx), "audit": audit},
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
