"""The domain list is the one declaration the other lists come from."""

from typing import get_args

from mcp_asrama.contract import DOMAINS, FEED_KINDS, IMPORT_KINDS, FeedKind


def test_feed_kind_literal_names_exactly_the_domains_with_a_feed() -> None:
    assert set(get_args(FeedKind)) == set(FEED_KINDS)


def test_domain_names_and_import_kinds_are_unique() -> None:
    names = [d.name for d in DOMAINS]
    assert len(names) == len(set(names))
    assert len(IMPORT_KINDS) == len(set(IMPORT_KINDS))


def test_a_domain_route_is_its_name() -> None:
    assert {d.path for d in DOMAINS} >= {"/anak", "/pelanggaran", "/hafalan", "/kesehatan", "/izin"}
