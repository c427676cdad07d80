"""The service's lists of domains are derived from `contract.DOMAINS`: the routers it mounts, the change feed's
kinds, the importer's kinds (and the CLI's choices); the dated domains share the list's query parameters."""

from typing import Any

import pytest
from fastapi.routing import APIRoute

from mcp_asrama.cli import main
from mcp_asrama.contract import DOMAINS, FEED_KINDS, IMPORT_KINDS
from mcp_asrama.service import import_pesantren, importer
from mcp_asrama.service.app import routers
from mcp_asrama.service.crud import perubahan


def test_one_router_per_domain_in_order_then_the_feed_health_and_docs() -> None:
    mounted = routers()
    assert [r.prefix for r in mounted[: len(DOMAINS)]] == [d.path for d in DOMAINS]
    paths = [{r.path for r in router.routes if isinstance(r, APIRoute)} for router in mounted[len(DOMAINS) :]]
    assert ["/perubahan" in paths[0], "/healthz" in paths[1], "/openapi.json" in paths[2]] == [True, True, True]


def test_the_feed_kinds_are_the_domains_with_a_feed() -> None:
    assert set(perubahan.JENIS) == set(FEED_KINDS)
    assert perubahan.jenis("hafalan") == "hafalan"
    with pytest.raises(ValueError, match="kelas"):
        perubahan.jenis("kelas")


def test_every_import_kind_has_a_target_and_its_domains_feed_kind() -> None:
    assert importer.KINDS == IMPORT_KINDS
    assert set(import_pesantren.FEED_KINDS) == set(IMPORT_KINDS)
    assert all(import_pesantren.FEED_KINDS[k] == d.name for d in DOMAINS for k in d.imports)
    assert {k: import_pesantren.FEED_KINDS[k] for k in ("anak", "jenis_pelanggaran", "hafalan")} == {
        "anak": "anak",
        "jenis_pelanggaran": "pelanggaran",
        "hafalan": "hafalan",
    }
    assert all(f"columns of 'import {k}'" in importer.columns_help() for k in IMPORT_KINDS)


def test_the_cli_offers_the_import_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["import", "bukan_jenis", "x.csv"])
    assert exited.value.code == 2
    assert ", ".join(f"'{k}'" for k in IMPORT_KINDS) in capsys.readouterr().err


def _query(route: APIRoute) -> list[str]:
    return [p.alias for p in route.dependant.query_params] + [
        p.alias for d in route.dependant.dependencies for p in _flat(d)
    ]


def _flat(dependant: Any) -> list[Any]:
    return [*dependant.query_params, *(p for d in dependant.dependencies for p in _flat(d))]


@pytest.mark.parametrize("name", [d.name for d in DOMAINS if d.dated and d.name != "izin"])
def test_a_dated_domains_list_takes_the_shared_filters_then_paging(name: str) -> None:
    (router,) = [r for r in routers() if r.prefix == f"/{name}"]
    (listing,) = [r for r in router.routes if isinstance(r, APIRoute) and r.path == f"/{name}" and "GET" in r.methods]
    shared = ["id_anak", "kelas", "kamar", "dari", "sampai"]
    params = _query(listing)
    assert params[:5] == shared
    assert params[-2:] == ["limit", "offset"]
