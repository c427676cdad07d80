"""The demo school's pesantren life, deterministic for a seed: violations, Qur'an memorisation deposits and clinic
visits at realistic rates.

- pelanggaran: about 10% of students have a violation in a month, mostly ringan (a chance per student-day);
- hafalan: each student deposits 0.5-2 pages (1 page ≈ 15 ayat) a week, their own pace, on three days a week,
  ziyadah from juz 30 backwards (An-Nas, Al-Falaq, ... An-Naba') and on into juz 29 (Al-Mursalat ... Al-Mulk), plus
  a weekly murajaah of a surah already memorised; what each had memorised before the demo's days is deposited in
  the half year before them (older classes are further on);
- kesehatan: 2-5% of students visit the clinic in a week, demam and batuk-pilek most often;
- any other dated domain that gives examples of its records (`Domain.contoh`): 2-4 records per 100 students a month,
  each one of the examples, of a random student on a random day (`examples`).

Each generator draws from its own generator seeded with (seed, domain), so they are independent of each other
and of the attendance; ids are drawn from it too (the same seed gives the same rows, handles included).
"""

import base64
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Any

from mcp_asrama import quran
from mcp_asrama.service.crud.pelanggaran import DEFAULT_JENIS

PAGE = 15  # ayat on a page of the mushaf, roughly
VIOLATION_PER_DAY = 0.0035  # 1 - (1 - p)^30 ≈ 10% of students a month
VISIT_PER_DAY = 0.005  # 1 - (1 - p)^7 ≈ 3.4% of students a week
DEPOSIT_WEEKDAYS = (0, 2, 5)  # Monday, Wednesday, Saturday
MURAJAAH_WEEKDAY = 5
_KATEGORI_WEIGHT = {"ringan": 75, "sedang": 20, "berat": 5}
_CATATAN_PELANGGARAN = [
    None,
    None,
    None,
    "Ditegur oleh musyrif",
    "Sudah membuat surat pernyataan",
    "Orang tua dikabari",
]
# The order of memorisation: juz 30 from An-Nas back to An-Naba', then juz 29 from Al-Mursalat back to Al-Mulk.
ORDER: tuple[int, ...] = (*range(114, 77, -1), *range(77, 66, -1))
# Per category: its weight among visits, and what is complained of, done and given.
_KELUHAN: dict[str, tuple[int, list[str], list[str], list[str]]] = {
    "demam": (
        30,
        ["Demam dan pusing", "Badan panas sejak malam", "Demam, lemas"],
        ["Kompres, istirahat di UKS", "Istirahat di kamar, banyak minum"],
        ["Parasetamol 500 mg", "Parasetamol sirup"],
    ),
    "batuk-pilek": (
        30,
        ["Batuk dan pilek", "Hidung tersumbat, bersin", "Batuk berdahak"],
        ["Istirahat, minum air hangat", "Diberi masker"],
        ["Obat batuk sirup", "Vitamin C"],
    ),
    "pencernaan": (
        15,
        ["Sakit perut", "Diare sejak pagi", "Mual setelah makan"],
        ["Diberi oralit, istirahat", "Makan bubur, istirahat"],
        ["Oralit", "Antasida"],
    ),
    "cedera": (
        10,
        ["Lutut lecet saat olahraga", "Kaki terkilir", "Jari terjepit pintu"],
        ["Luka dibersihkan dan diperban", "Kompres dingin, kaki ditinggikan"],
        ["Povidone iodine", "Salep memar"],
    ),
    "kulit": (
        10,
        ["Gatal-gatal di tangan", "Ruam di punggung", "Bisul kecil"],
        ["Diberi salep, jaga kebersihan", "Pakaian dan sprei dicuci"],
        ["Salep gatal", "Bedak salisil"],
    ),
    "lainnya": (
        5,
        ["Sakit gigi", "Mata merah", "Sakit kepala"],
        ["Istirahat, dipantau", "Diperiksa petugas"],
        ["Parasetamol 500 mg", "Tetes mata"],
    ),
}
_PETUGAS = ["Ns. Aminah", "Ns. Farida"]
EXAMPLES_PER_MONTH = (0.02, 0.04)  # records of a domain with examples, per student and month (2-4 per 100)


def _handle(rng: random.Random) -> str:
    """A 16-character URL-safe id, like `secrets.token_urlsafe(12)`, drawn from `rng`."""
    return base64.urlsafe_b64encode(rng.getrandbits(96).to_bytes(12, "big")).decode()


def _moment(tanggal: date, rng: random.Random) -> datetime:
    return datetime.combine(tanggal, time(7 + rng.randint(0, 13), rng.randint(0, 59)), tzinfo=UTC)


def _days(today: date, days: int) -> list[date]:
    start = today - timedelta(days=days - 1)
    return [start + timedelta(days=n) for n in range(days)]


def _musyrif(kamar: Sequence[dict[str, Any]]) -> dict[str, str | None]:
    return {k["nama"]: k.get("musyrif") for k in kamar}


def pelanggaran(
    anak: Sequence[dict[str, Any]], kamar: Sequence[dict[str, Any]], today: date, days: int, seed: int
) -> Iterator[dict[str, Any]]:
    """Violations over the `days` days up to `today`, recorded by the student's musyrif."""
    rng = random.Random(f"{seed}-pelanggaran")  # noqa: S311 (deterministic fake data)
    musyrif = _musyrif(kamar)
    kinds = {k: [j for j in DEFAULT_JENIS if j[2] == k] for k in _KATEGORI_WEIGHT}
    for tanggal in _days(today, days):
        for a in anak:
            if rng.random() >= VIOLATION_PER_DAY:
                continue
            kategori = rng.choices(list(_KATEGORI_WEIGHT), weights=list(_KATEGORI_WEIGHT.values()))[0]
            kode, _, _, poin = rng.choice(kinds[kategori])
            yield {
                "id": _handle(rng),
                "id_anak": a["id"],
                "tanggal": tanggal,
                "kategori": kategori,
                "jenis": kode,
                "poin": poin,
                "keterangan": rng.choice(_CATATAN_PELANGGARAN),
                "dicatat_oleh": musyrif.get(a.get("kamar") or "") or "demo",
                "dibuat": _moment(tanggal, rng),
            }


@cache
def _order() -> tuple[tuple[int, int, int], ...]:
    """(surah, its first position along ORDER, its length) for each surah of ORDER."""
    out = []
    position = 0
    for nomor in ORDER:
        length = quran.surah(nomor).jumlah_ayat
        out.append((nomor, position, length))
        position += length
    return tuple(out)


def _ranges(start: int, count: int) -> list[tuple[int, int, int]]:
    """`count` ayat from position `start` (0: An-Nas 1) along ORDER, as (surah, ayat_mulai, ayat_selesai) ranges,
    one per surah touched; fewer when ORDER ends."""
    out = []
    for nomor, position, length in _order():
        lo, hi = max(start, position), min(start + count, position + length)
        if lo < hi:
            out.append((nomor, lo - position + 1, hi - position))
    return out


def _setoran(
    rng: random.Random, a: dict[str, Any], penguji: str | None, tanggal: date, jenis: str, r: tuple[int, int, int]
) -> dict[str, Any]:
    return {
        "id": _handle(rng),
        "id_anak": a["id"],
        "tanggal": tanggal,
        "jenis": jenis,
        "surah": r[0],
        "ayat_mulai": r[1],
        "ayat_selesai": r[2],
        "nilai": rng.randint(65, 100),
        "penguji": penguji,
        "dicatat_oleh": penguji or "demo",
        "dibuat": _moment(tanggal, rng),
    }


def hafalan(
    anak: Sequence[dict[str, Any]], kamar: Sequence[dict[str, Any]], today: date, days: int, seed: int
) -> Iterator[dict[str, Any]]:
    """Deposits over the `days` days up to `today` (and, before them, what each student had memorised already),
    examined by the student's musyrif."""
    rng = random.Random(f"{seed}-hafalan")  # noqa: S311 (deterministic fake data)
    musyrif = _musyrif(kamar)
    window = _days(today, days)
    for a in anak:
        penguji = musyrif.get(a.get("kamar") or "")
        grade = int(a["kelas"][:-1]) if a["kelas"][:-1].isdigit() else 7
        done = min(max(0, (grade - 7) * 110 + rng.randint(-40, 60)), 900)
        pace = rng.uniform(0.5, 2.0) * PAGE / len(DEPOSIT_WEEKDAYS)  # ayat per deposit day

        before = window[0] - timedelta(days=180)
        for n, r in enumerate(_ranges(0, done)):
            yield _setoran(rng, a, penguji, before + timedelta(days=n * 3 % 180), "ziyadah", r)
        owed = 0.0
        for tanggal in window:
            if tanggal.weekday() not in DEPOSIT_WEEKDAYS:
                continue
            owed += pace * rng.uniform(0.6, 1.4)
            count = int(owed)
            owed -= count
            for r in _ranges(done, count):
                yield _setoran(rng, a, penguji, tanggal, "ziyadah", r)
            done += count
            memorised = [n for n, position, length in _order() if position + length <= done]
            if tanggal.weekday() == MURAJAAH_WEEKDAY and memorised:
                surah = rng.choice(memorised)
                yield _setoran(rng, a, penguji, tanggal, "murajaah", (surah, 1, quran.surah(surah).jumlah_ayat))


def kesehatan(anak: Sequence[dict[str, Any]], today: date, days: int, seed: int) -> Iterator[dict[str, Any]]:
    """Clinic visits over the `days` days up to `today`; now and then one referred to the puskesmas."""
    rng = random.Random(f"{seed}-kesehatan")  # noqa: S311 (deterministic fake data)
    kategori = list(_KELUHAN)
    weights = [v[0] for v in _KELUHAN.values()]
    for tanggal in _days(today, days):
        for a in anak:
            if rng.random() >= VISIT_PER_DAY:
                continue
            k = rng.choices(kategori, weights=weights)[0]
            _, keluhan, tindakan, obat = _KELUHAN[k]
            petugas = rng.choice(_PETUGAS)
            yield {
                "id": _handle(rng),
                "id_anak": a["id"],
                "tanggal": tanggal,
                "keluhan": rng.choice(keluhan),
                "kategori": k,
                "tindakan": rng.choice(tindakan),
                "obat": rng.choice(obat) if rng.random() < 0.8 else None,
                "rujukan": "Puskesmas terdekat" if rng.random() < 0.03 else None,
                "petugas": petugas,
                "dicatat_oleh": petugas,
                "dibuat": _moment(tanggal, rng),
            }


def examples(
    name: str, contoh: Sequence[dict[str, Any]], anak: Sequence[dict[str, Any]], today: date, days: int, seed: int
) -> Iterator[dict[str, Any]]:
    """Records of domain `name` over the `days` days up to `today`, recorded by "demo": in each month of them (30
    days; the last may be shorter, with fewer) 2-4 per 100 students, each of a random student on a random day with
    the fields of one of `contoh`."""
    rng = random.Random(f"{seed}-{name}")  # noqa: S311 (deterministic fake data)
    window = _days(today, days)
    for start in range(0, len(window) if anak and contoh else 0, 30):
        month = window[start : start + 30]
        for _ in range(round(len(anak) * rng.uniform(*EXAMPLES_PER_MONTH) * len(month) / 30)):
            tanggal = rng.choice(month)
            yield {
                "id": _handle(rng),
                "id_anak": rng.choice(anak)["id"],
                "tanggal": tanggal,
                **rng.choice(contoh),
                "dicatat_oleh": "demo",
                "dibuat": _moment(tanggal, rng),
            }
