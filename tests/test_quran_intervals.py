"""Counting by merged intervals (`quran.merge`, `count_ayat`, `count_juz`) gives what counting ayat by ayat gives,
on random ranges with overlaps, ranges across juz boundaries and invalid ones; and `GET /hafalan/progres`, which
counts each student's deposits that way from packed integers, agrees with that count on random stored deposits
(invalid ranges, murajaah, old and recent ones too), on SQLite and PostgreSQL."""

import random
import secrets
from bisect import bisect_right
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import insert

from mcp_asrama import quran
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models import Hafalan
from tests.conftest import TUTORIAL_ANAK, serve_db


def _reference_indices(ranges: Iterable[quran.Range]) -> set[int]:
    """Every ayat of every range, one by one (the way progress was first counted)."""
    out: set[int] = set()
    for nomor, mulai, selesai in ranges:
        quran.validate_range(nomor, mulai, selesai)
        out.update(range(quran.global_index(nomor, mulai), quran.global_index(nomor, selesai) + 1))
    return out


def _reference_juz(ranges: Iterable[quran.Range]) -> float:
    starts = [quran.global_index(s, a) for s, a in quran.JUZ_STARTS]
    covered = [0] * 30
    for index in _reference_indices(ranges):
        covered[bisect_right(starts, index) - 1] += 1
    return sum(n / quran.ayat_in_juz(juz) for juz, n in enumerate(covered, start=1))


def _random_range(rng: random.Random, invalid: float = 0.0) -> quran.Range:
    if rng.random() < invalid:
        return rng.choice([(0, 1, 1), (115, 1, 2), (2, 0, 5), (2, 10, 5), (1, 1, 8), (114, 7, 7), (2, 280, 300)])
    nomor = rng.randint(1, 114) if rng.random() < 0.5 else rng.choice([2, 3, 4, 78, 114])  # long, juz-crossing
    length = quran.surah(nomor).jumlah_ayat
    mulai = rng.randint(1, length)
    return nomor, mulai, rng.randint(mulai, min(length, mulai + rng.choice([0, 3, 40, 300])))


@pytest.mark.parametrize("seed", range(40))
def test_merged_counts_equal_counting_ayat_by_ayat(seed: int) -> None:
    rng = random.Random(seed)
    ranges = [_random_range(rng) for _ in range(rng.randint(0, 60))]
    ranges += ranges[: len(ranges) // 4]  # exact repeats too
    assert quran.ayat_count(ranges) == len(_reference_indices(ranges))
    assert quran.juz_memorised(ranges) == _reference_juz(ranges)  # the same float, not only close
    merged = quran.merge(quran.interval(*r) for r in ranges)
    assert all(a[1] + 1 < b[0] for a, b in pairwise(merged))  # disjoint, not even adjacent


def test_ranges_across_juz_boundaries_and_the_whole_quran() -> None:
    whole = [(s.nomor, 1, s.jumlah_ayat) for s in quran.surahs()]
    assert quran.merge(quran.interval(*r) for r in whole) == [(1, quran.TOTAL_AYAT)]
    assert quran.juz_memorised(whole) == _reference_juz(whole) == pytest.approx(30.0)
    across = [(2, 141, 142), (2, 252, 253), (77, 50, 50), (78, 1, 1)]  # each juz boundary crossed or touched
    assert quran.juz_memorised(across) == _reference_juz(across)
    assert quran.count_juz([]) == 0.0 and quran.count_ayat([]) == 0


@pytest.mark.parametrize("bad", [(0, 1, 1), (115, 1, 1), (2, 0, 3), (2, 9, 3), (1, 1, 8), (1, -1, 2)])
def test_an_invalid_range_is_refused_as_counting_ayat_by_ayat_refuses_it(bad: quran.Range) -> None:
    with pytest.raises(ValueError) as expected:
        _reference_indices([bad])
    with pytest.raises(ValueError) as got:
        quran.ayat_count([(1, 1, 7), bad])
    assert str(got.value) == str(expected.value)
    with pytest.raises(ValueError):
        quran.juz_memorised([bad])


@pytest.mark.anyio
async def test_progres_counts_random_stored_deposits_as_the_reference_does(tutorial_db: str) -> None:
    rng = random.Random(13)
    today = date.today()
    engine = make_engine(tutorial_db)
    ids = [a["id"] for a in TUTORIAL_ANAK]
    rows: list[dict[str, Any]] = []
    for id_anak in ids[:-1]:  # the last student has no deposit
        for _ in range(rng.randint(1, 40)):
            surah, mulai, selesai = _random_range(rng, invalid=0.15)
            rows.append(
                {
                    "id": secrets.token_urlsafe(12),
                    "id_anak": id_anak,
                    "tanggal": today - timedelta(days=rng.choice([0, 5, 27, 28, 60, 400])),
                    "jenis": "ziyadah" if rng.random() < 0.8 else "murajaah",
                    "surah": surah,
                    "ayat_mulai": mulai,
                    "ayat_selesai": selesai,
                    "dibuat": datetime.now(UTC),
                }
            )
    async for service in serve_db(tutorial_db):
        with make_sessionmaker(engine)() as session, session.begin():
            session.execute(insert(Hafalan), rows)
        engine.dispose()
        answer = (await service.get("/hafalan/progres")).json()
        assert answer["jumlah_anak"] == len(ids)
        by_id = {p["id_anak"]: p for p in answer["data"]}
        window = today - timedelta(days=27)
        for id_anak in ids:
            mine = [r for r in rows if r["id_anak"] == id_anak]
            valid = [
                (r["surah"], r["ayat_mulai"], r["ayat_selesai"])
                for r in mine
                if r["jenis"] == "ziyadah" and not _invalid((r["surah"], r["ayat_mulai"], r["ayat_selesai"]))
            ]
            recent = [
                (r["surah"], r["ayat_mulai"], r["ayat_selesai"])
                for r in mine
                if r["jenis"] == "ziyadah"
                and window <= r["tanggal"] <= today
                and not _invalid((r["surah"], r["ayat_mulai"], r["ayat_selesai"]))
            ]
            got = by_id[id_anak]
            assert got["ayat"] == len(_reference_indices(valid))
            assert got["juz"] == round(_reference_juz(valid), 2)
            assert got["ayat_per_pekan"] == round(len(_reference_indices(recent)) / 4, 1)
            last = max((r["tanggal"] for r in mine), default=None)
            assert got.get("setoran_terakhir") == (last.isoformat() if last else None)
        assert [p["ayat"] for p in answer["data"]] == sorted((p["ayat"] for p in answer["data"]), reverse=True)


def _invalid(r: quran.Range) -> bool:
    try:
        quran.validate_range(*r)
    except ValueError:
        return True
    return False
