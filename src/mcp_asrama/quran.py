"""The Qur'an's surahs, ayat and juz, for counting hafalan (memorisation deposits).

Pure reference data: the 114 surahs (Indonesian pesantren spelling, Hafs/Kufan ayat count, 6236 in all) from
``data/surah.csv``, and the 30 juz start points of the Madani mushaf. Ayat are addressed as ``(surah, ayat)``
with both numbers starting at 1; a range is ``(surah, ayat_mulai, ayat_selesai)``, both ends included.
"""

import csv
import io
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

TOTAL_AYAT = 6236
SURAHS = 114
LONGEST_SURAH = 286  # ayat of Al-Baqarah

# Where each juz starts, as (surah, ayat), following the Madani mushaf (as Tanzil and quran.com do).
# Sub-continent mushafs differ by one ayat at juz 4 (3:92), 7 (5:83) and 11 (9:94), among others.
JUZ_STARTS: tuple[tuple[int, int], ...] = (
    (1, 1), (2, 142), (2, 253), (3, 93), (4, 24), (4, 148), (5, 82), (6, 111), (7, 88), (8, 41),
    (9, 93), (11, 6), (12, 53), (15, 1), (17, 1), (18, 75), (21, 1), (23, 1), (25, 21), (27, 56),
    (29, 46), (33, 31), (36, 28), (39, 32), (41, 47), (46, 1), (51, 31), (58, 1), (67, 1), (78, 1),
)  # fmt: skip

Range = tuple[int, int, int]


@dataclass(frozen=True)
class Surah:
    nomor: int
    nama: str
    jumlah_ayat: int


@cache
def _table() -> tuple[tuple[Surah, ...], dict[str, int]]:
    """The surahs in order, and every normalised name or alias -> surah number."""
    text = (files("mcp_asrama") / "data" / "surah.csv").read_text(encoding="utf-8")
    surahs: list[Surah] = []
    names: dict[str, int] = {}
    for row in csv.DictReader(io.StringIO(text)):
        s = Surah(int(row["nomor"]), row["nama"], int(row["jumlah_ayat"]))
        surahs.append(s)
        for name in [s.nama, *filter(None, row["nama_lain"].split("|"))]:
            names.setdefault(_key(name), s.nomor)
    return tuple(surahs), names


@cache
def _offsets() -> tuple[int, ...]:
    """offsets[n - 1] = how many ayat come before surah n."""
    out: list[int] = []
    total = 0
    for s in _table()[0]:
        out.append(total)
        total += s.jumlah_ayat
    return tuple(out)


@cache
def _juz_starts() -> tuple[int, ...]:
    return tuple(global_index(s, a) for s, a in JUZ_STARTS)


_ARTICLE = re.compile(r"^(al|an|ar|as|asy|ash|at|ath|az|adz|ad|adh)[\s'`’‘-]+")
_DIGRAPHS = (("dz", "z"), ("dh", "d"), ("ts", "s"), ("th", "t"), ("sh", "s"), ("sy", "s"), ("gh", "g"))


def _key(name: str) -> str:
    """A spelling-forgiving key: no article, letters only, Arabic digraphs simplified, no doubled letters or final h.

    So "Al-Baqarah", "al baqarah" and "Baqara" agree, as do "Yasin", "Ya-Sin" and "Yaasiin", and the Kemenag
    spellings ("Az-Zariyat", "Al-Kausar") agree with the popular ones ("Adz-Dzariyat", "Al-Kautsar").
    """
    key = re.sub(r"[^a-z]", "", _ARTICLE.sub("", name.strip().lower()))
    for digraph, letter in _DIGRAPHS:
        key = key.replace(digraph, letter)
    key = re.sub(r"(.)\1+", r"\1", key)
    return key[:-1] if len(key) > 2 and key.endswith("h") else key


def surahs() -> tuple[Surah, ...]:
    """All 114 surahs, in mushaf order."""
    return _table()[0]


def surah(nomor: int) -> Surah:
    """The surah with this number (1-114); ValueError otherwise."""
    if not 1 <= nomor <= len(surahs()):
        raise ValueError(f"Nomor surah harus 1–114, bukan {nomor}")
    return surahs()[nomor - 1]


def find_surah(text: str) -> Surah | None:
    """The surah named or numbered by `text` ("2", "Al-Baqarah", "al baqarah", "baqarah"), or None.

    Names match when equal after `_key`: case, spaces, hyphens, apostrophes, the article (Al-/An-/Asy-/...,
    when followed by a space or hyphen), dz/dh/ts/th/sh/sy/gh versus z/d/s/t/s/s/g, doubled letters and a final h are
    ignored. A few other names are known too (Bara'ah, Al-Insyirah, Al-Masad, ...). No fuzzy matching.
    """
    text = text.strip()
    if text.isdecimal():
        return surahs()[int(text) - 1] if 1 <= int(text) <= len(surahs()) else None
    nomor = _table()[1].get(_key(text)) if text else None
    return None if nomor is None else surah(nomor)


def validate_range(nomor: int, ayat_mulai: int, ayat_selesai: int) -> Surah:
    """The surah, if ayat_mulai..ayat_selesai lies within it; ValueError with an Indonesian message otherwise."""
    s = surah(nomor)
    if ayat_mulai < 1 or ayat_selesai < 1:
        raise ValueError("Nomor ayat dimulai dari 1")
    if ayat_mulai > s.jumlah_ayat or ayat_selesai > s.jumlah_ayat:
        raise ValueError(f"{s.nama} hanya punya {s.jumlah_ayat} ayat")
    if ayat_mulai > ayat_selesai:
        raise ValueError(f"Ayat mulai ({ayat_mulai}) melewati ayat selesai ({ayat_selesai})")
    return s


def global_index(nomor: int, ayat: int) -> int:
    """The position of an ayat in the whole Qur'an, 1 (1:1) to 6236 (114:6)."""
    validate_range(nomor, ayat, ayat)
    return _offsets()[nomor - 1] + ayat


def juz_of(nomor: int, ayat: int) -> int:
    """The juz (1-30) this ayat is in."""
    return bisect_right(_juz_starts(), global_index(nomor, ayat))


def juz_span(nomor: int, ayat_mulai: int, ayat_selesai: int) -> list[int]:
    """Every juz the range touches, in order."""
    validate_range(nomor, ayat_mulai, ayat_selesai)
    return list(range(juz_of(nomor, ayat_mulai), juz_of(nomor, ayat_selesai) + 1))


@cache
def _juz_sizes() -> tuple[int, ...]:
    return tuple(ayat_in_juz(juz) for juz in range(1, len(JUZ_STARTS) + 1))


def ayat_in_juz(juz: int) -> int:
    """How many ayat juz `juz` (1-30) holds."""
    if not 1 <= juz <= len(JUZ_STARTS):
        raise ValueError(f"Nomor juz harus 1–30, bukan {juz}")
    starts = (*_juz_starts(), TOTAL_AYAT + 1)
    return starts[juz] - starts[juz - 1]


Interval = tuple[int, int]  # global indexes of the first and the last ayat, both included


@cache
def _bounds() -> tuple[tuple[int, int], ...]:
    """(ayat before it, its ayat) per surah number; index 0 is no surah."""
    return ((0, 0), *((_offsets()[s.nomor - 1], s.jumlah_ayat) for s in surahs()))


def interval(nomor: int, ayat_mulai: int, ayat_selesai: int) -> Interval:
    """The range as global indexes (`global_index` of both ends); ValueError when it is not within the surah."""
    if 1 <= nomor <= SURAHS and 1 <= ayat_mulai <= ayat_selesai:
        before, length = _bounds()[nomor]
        if ayat_selesai <= length:
            return before + ayat_mulai, before + ayat_selesai
    validate_range(nomor, ayat_mulai, ayat_selesai)  # raises, saying why
    raise AssertionError("unreachable")


AYAT_KEY = 1024  # > LONGEST_SURAH: surah * AYAT_KEY + ayat is an ayat's key


@cache
def ayat_keys() -> tuple[int, ...]:
    """The global index (`global_index`) of every ayat key, surah * AYAT_KEY + ayat; 0 for a key of no ayat."""
    out = [0] * (AYAT_KEY * (SURAHS + 1))
    for nomor, (before, length) in enumerate(_bounds()[1:], start=1):
        out[nomor * AYAT_KEY + 1 : nomor * AYAT_KEY + length + 1] = range(before + 1, before + length + 1)
    return tuple(out)


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Disjoint intervals, in order, covering exactly the ayat of `intervals` (overlapping or adjacent ones joined)."""
    out: list[Interval] = []
    for first, last in sorted(intervals):
        if out and first <= out[-1][1] + 1:
            if last > out[-1][1]:
                out[-1] = (out[-1][0], last)
        else:
            out.append((first, last))
    return out


def count_ayat(merged: Iterable[Interval]) -> int:
    """How many ayat disjoint intervals (`merge`'s) cover."""
    return sum(last - first + 1 for first, last in merged)


def count_juz(merged: Iterable[Interval]) -> float:
    """Juz that disjoint intervals (`merge`'s) cover, as `juz_memorised` counts them."""
    starts = _juz_starts()
    covered: dict[int, int] = {}  # 0-based juz -> ayat covered, in rising juz order (the intervals are in order)
    for first, last in merged:
        juz = bisect_right(starts, first) - 1  # the juz of the interval's first ayat
        while first <= last:
            end = min(last, starts[juz + 1] - 1 if juz + 1 < len(starts) else TOTAL_AYAT)
            covered[juz] = covered.get(juz, 0) + end - first + 1
            first, juz = end + 1, juz + 1
    # The juz not covered add 0.0 to the per-juz sum: leaving them out gives the same float.
    sizes = _juz_sizes()
    return sum(n / sizes[juz] for juz, n in covered.items())


def ayat_count(ranges: Iterable[Range]) -> int:
    """How many distinct ayat the (surah, ayat_mulai, ayat_selesai) ranges cover; overlaps count once."""
    return count_ayat(merge(interval(*r) for r in ranges))


def juz_memorised(ranges: Iterable[Range]) -> float:
    """Juz memorised, as the sum over juz of (distinct ayat covered in it / ayat in it): all of juz 30 is 1.0."""
    return count_juz(merge(interval(*r) for r in ranges))
