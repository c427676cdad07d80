"""The Qur'an reference data: 114 surahs, 6236 ayat, 30 juz, and counting hafalan over them."""

import csv
from importlib.resources import files

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_asrama import quran
from mcp_asrama.quran import (
    Surah,
    ayat_count,
    ayat_in_juz,
    find_surah,
    global_index,
    juz_memorised,
    juz_of,
    juz_span,
    surah,
    surahs,
    validate_range,
)

# Ayat per juz in the Madani division (as quran.com's API v4 lists them); juz 30 is the well-known 564.
AYAT_PER_JUZ = [148, 111, 126, 131, 124, 110, 149, 142, 159, 127, 151, 170, 154, 227, 185,
                269, 190, 202, 339, 171, 178, 169, 357, 175, 246, 195, 399, 137, 431, 564]  # fmt: skip


def test_114_surahs_numbered_in_order_with_6236_ayat() -> None:
    assert [s.nomor for s in surahs()] == list(range(1, 115))
    assert sum(s.jumlah_ayat for s in surahs()) == quran.TOTAL_AYAT == 6236
    assert global_index(1, 1) == 1
    assert global_index(114, 6) == 6236


@pytest.mark.parametrize(
    ("nomor", "nama", "jumlah"),
    [
        (1, "Al-Fatihah", 7),
        (2, "Al-Baqarah", 286),
        (3, "Ali 'Imran", 200),
        (4, "An-Nisa'", 176),
        (18, "Al-Kahfi", 110),
        (36, "Yasin", 83),
        (67, "Al-Mulk", 30),
        (78, "An-Naba'", 40),
        (112, "Al-Ikhlas", 4),
        (113, "Al-Falaq", 5),
        (114, "An-Nas", 6),
    ],
)
def test_spot_checks(nomor: int, nama: str, jumlah: int) -> None:
    assert surah(nomor) == Surah(nomor, nama, jumlah)


def test_the_data_file_ships_inside_the_package() -> None:
    assert (files("mcp_asrama") / "data" / "surah.csv").is_file()


@pytest.mark.parametrize(("nomor", "ayat", "juz"), [(1, 1, 1), (2, 141, 1), (2, 142, 2), (2, 252, 2), (2, 253, 3),
                                                     (5, 81, 6), (5, 82, 7), (36, 27, 22), (36, 28, 23), (66, 12, 28),
                                                     (67, 1, 29), (77, 50, 29), (78, 1, 30), (114, 6, 30)])  # fmt: skip
def test_juz_boundaries(nomor: int, ayat: int, juz: int) -> None:
    assert juz_of(nomor, ayat) == juz


def test_every_juz_starts_where_the_table_says_and_the_ayat_per_juz_add_up() -> None:
    for juz, (nomor, ayat) in enumerate(quran.JUZ_STARTS, start=1):
        assert juz_of(nomor, ayat) == juz
        if ayat > 1:
            assert juz_of(nomor, ayat - 1) == juz - 1
    assert [ayat_in_juz(j) for j in range(1, 31)] == AYAT_PER_JUZ
    assert sum(AYAT_PER_JUZ) == 6236
    assert ayat_in_juz(30) == sum(s.jumlah_ayat for s in surahs()[77:]) == 564


def test_juz_span() -> None:
    assert juz_span(2, 1, 286) == [1, 2, 3]
    assert juz_span(2, 142, 252) == [2]
    assert juz_span(36, 1, 83) == [22, 23]
    assert juz_span(78, 1, 40) == [30]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((2, 1, 287), "Al-Baqarah hanya punya 286 ayat"),
        ((2, 287, 290), "Al-Baqarah hanya punya 286 ayat"),
        ((1, 0, 7), "Nomor ayat dimulai dari 1"),
        ((36, 10, 5), r"Ayat mulai \(10\) melewati ayat selesai \(5\)"),
        ((0, 1, 1), "Nomor surah harus 1–114, bukan 0"),
        ((115, 1, 1), "Nomor surah harus 1–114, bukan 115"),
    ],
)
def test_validation_errors(args: tuple[int, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        validate_range(*args)


def test_valid_ranges_pass_and_invalid_ones_are_refused_everywhere() -> None:
    assert validate_range(1, 1, 7) == surah(1)
    assert validate_range(114, 6, 6) == surah(114)
    with pytest.raises(ValueError, match="An-Nas hanya punya 6 ayat"):
        juz_of(114, 7)
    with pytest.raises(ValueError, match="Nomor juz harus 1–30"):
        ayat_in_juz(31)
    with pytest.raises(ValueError, match="Al-Fatihah hanya punya 7 ayat"):
        ayat_count([(1, 1, 8)])


@pytest.mark.parametrize(
    ("text", "nomor"),
    [
        ("2", 2), (" 2 ", 2), ("al baqarah", 2), ("Al-Baqarah", 2), ("baqarah", 2), ("AL-BAQARA", 2),
        ("Ali Imran", 3), ("ali 'imran", 3), ("Al-Imran", 3), ("an-nisa", 4), ("Al-Kahf", 18), ("Thaha", 20),
        ("Ta-Ha", 20), ("yasin", 36), ("Ya-Sin", 36), ("Yaasiin", 36), ("Ya Siin", 36), ("Az-Zariyat", 51),
        ("adz dzariyat", 51), ("Tabarak", 67), ("al mulk", 67), ("An-Naba", 78), ("Alam Nasyrah", 94),
        ("Al-Insyirah", 94), ("Al-Kausar", 108), ("Al-Kautsar", 108), ("al ikhlas", 112), ("Al-Falaq", 113),
        ("An Nas", 114), ("an-nas", 114), ("114", 114), ("Ash-Shams", 91), ("Asy-Syams", 91), ("Al-Masad", 111),
    ],
)  # fmt: skip
def test_find_surah(text: str, nomor: int) -> None:
    found = find_surah(text)
    assert found is not None and found.nomor == nomor


@pytest.mark.parametrize("text", ["", "  ", "0", "115", "²", "Al-", "Surat Cinta", "baqarahh x"])
def test_find_surah_finds_nothing(text: str) -> None:
    assert find_surah(text) is None


def test_every_name_and_alias_finds_its_own_surah() -> None:
    text = (files("mcp_asrama") / "data" / "surah.csv").read_text(encoding="utf-8")
    for row in csv.DictReader(text.splitlines()):
        for name in [row["nama"], *filter(None, row["nama_lain"].split("|"))]:
            found = find_surah(name)
            assert found is not None and found.nomor == int(row["nomor"]), name


def test_overlapping_ranges_count_each_ayat_once() -> None:
    assert ayat_count([]) == 0
    assert ayat_count([(2, 1, 10)]) == 10
    assert ayat_count([(2, 1, 10), (2, 5, 20), (2, 20, 20)]) == 20
    assert ayat_count([(2, 1, 10), (3, 1, 10)]) == 20
    assert ayat_count([(s.nomor, 1, s.jumlah_ayat) for s in surahs()]) == 6236


def test_juz_memorised() -> None:
    juz_30 = [(n, 1, surah(n).jumlah_ayat) for n in range(78, 115)]
    assert juz_memorised(juz_30) == pytest.approx(1.0)
    assert juz_memorised(juz_30 + juz_30 + [(78, 1, 10)]) == pytest.approx(1.0)
    assert juz_memorised([(78, 1, 40)]) == pytest.approx(40 / 564)
    assert juz_memorised([]) == 0.0
    assert juz_memorised([(s.nomor, 1, s.jumlah_ayat) for s in surahs()]) == pytest.approx(30.0)
    # Al-Baqarah 142-252 is exactly juz 2; 1-141 is juz 1 less Al-Fatihah's 7 ayat.
    assert juz_memorised([(2, 142, 252)]) == pytest.approx(1.0)
    assert juz_memorised([(2, 1, 141)]) == pytest.approx(141 / 148)


ranges = st.integers(1, 114).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(1, surah(n).jumlah_ayat), st.integers(1, surah(n).jumlah_ayat))
)


@given(st.lists(ranges, max_size=8))
def test_counts_agree_with_listing_every_ayat(rs: list[tuple[int, int, int]]) -> None:
    ordered = [(n, min(a, b), max(a, b)) for n, a, b in rs]
    ayat = {(n, a) for n, mulai, selesai in ordered for a in range(mulai, selesai + 1)}
    assert ayat_count(ordered) == len(ayat)
    per_juz: dict[int, int] = {}
    for n, a in ayat:
        per_juz[juz_of(n, a)] = per_juz.get(juz_of(n, a), 0) + 1
    assert juz_memorised(ordered) == pytest.approx(sum(c / ayat_in_juz(j) for j, c in per_juz.items()))
