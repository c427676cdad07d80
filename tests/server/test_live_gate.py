"""Subscriptions are served and advertised in both eras, and gated: only what the caller may read right now.

Tutorial data: A001 (7A, Al-Fatih 1), A002 (8B, Al-Fatih 1), A003 (7A, Aisyah 2).
"""

import warnings
from datetime import date

import pytest
from fastapi import FastAPI
from mcp import MCPDeprecationWarning
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from mcp_asrama.client.feed import Perubahan
from mcp_asrama.contract.domains import DOMAINS
from mcp_asrama.server.listen_gate import LISTS, PUBLISHED, Plan, Published
from mcp_asrama.server.live import touched
from tests.server.conftest import connect, server_for

pytestmark = pytest.mark.anyio

AISYAH = ["kamar:Aisyah 2"]
DAY = date(2026, 10, 6)
KAMAR = "asrama://kamar"
SUBSCRIBED = {
    "asrama://anak/A001",
    "asrama://anak/A002/pelanggaran",
    "asrama://anak/A003/hafalan",
    "asrama://absensi/2026-10-06",
    KAMAR,
}


def change(jenis: str, **keys: object) -> Perubahan:
    return Perubahan.model_validate({"id": 1, "jenis": jenis, **keys})


@pytest.mark.parametrize(
    ("event", "uris"),
    [
        (change("absensi", tanggal=DAY, id_anak="A009"), {"asrama://absensi/2026-10-06", "asrama://anak/A009"}),
        (change("absensi", tanggal=DAY), {"asrama://absensi/2026-10-06", "asrama://anak/A001"}),
        (change("absensi"), {"asrama://absensi/2026-10-06", "asrama://anak/A001"}),
        (change("izin", id_anak="A002"), {"asrama://anak/A002"}),
        (change("anak", id_anak="A002"), {"asrama://anak/A002", KAMAR}),
        (change("anak"), {"asrama://anak/A001", KAMAR}),
        (change("kamar", kamar="Aisyah 2"), {KAMAR}),
        (change("pelanggaran", id_anak="A001", tanggal=DAY), {"asrama://anak/A001/pelanggaran"}),
        (change("pelanggaran"), {"asrama://anak/A002/pelanggaran"}),
        (change("hafalan", id_anak="A003"), {"asrama://anak/A003/hafalan"}),
        (change("hafalan"), {"asrama://anak/A003/hafalan"}),
        (change("kesehatan", id_anak="A001", tanggal=DAY), set()),
    ],
)
def test_a_change_touches_the_resources_whose_content_it_changes(event: Perubahan, uris: set[str]) -> None:
    assert touched(event, SUBSCRIBED) == uris


async def test_the_subscribable_resources_are_the_domains_and_each_is_registered(service_app: FastAPI) -> None:
    server = server_for(service_app)
    registered = {str(r.uri) for r in await server.list_resources()}
    registered |= {t.uri_template for t in await server.list_resource_templates()}
    declared = {d.resource for d in DOMAINS if d.resource is not None}
    assert {p.template for p in PUBLISHED.values()} == declared
    assert declared <= registered
    assert {KAMAR} == LISTS


def test_a_new_domain_with_a_resource_is_filled_matched_and_checked_by_family() -> None:
    """What a domain added to `contract.DOMAINS` gets without an edit to live.py or listen_gate.py."""
    prestasi = Published("prestasi", "asrama://anak/{id_anak}/prestasi")
    assert prestasi.uri(change("pelanggaran", id_anak="A001")) == "asrama://anak/A001/prestasi"
    assert prestasi.uri(change("pelanggaran")) is None
    assert prestasi.among({"asrama://anak/A001/prestasi", "asrama://anak/A001", "asrama://anak/A/B/prestasi"}) == {
        "asrama://anak/A001/prestasi"
    }
    day = Published("x", "asrama://x/{tanggal}")
    assert day.uri(change("absensi", tanggal=DAY)) == "asrama://x/2026-10-06"


def test_a_listen_is_checked_by_family() -> None:
    uris = [
        "asrama://anak/A001",
        "asrama://anak/A002",
        "asrama://anak/A001/hafalan",
        "asrama://absensi/2026-10-06",
        "asrama://absensi/2026-10-07",
        "asrama://absensi/kemarin",
        KAMAR,
    ]
    plan = Plan.of(uris)
    assert plan.single == ["asrama://absensi/kemarin", KAMAR]
    assert list(plan.days.values()) == [["asrama://absensi/2026-10-06", "asrama://absensi/2026-10-07"]]
    assert plan.students == {
        "anak": [("asrama://anak/A001", "A001"), ("asrama://anak/A002", "A002")],
        "hafalan": [("asrama://anak/A001/hafalan", "A001")],
    }
    assert plan.reads == 2 + 1 + 2 + 1  # singles, one day, a family of two (first + one lookup), a family of one


async def test_both_eras_advertise_resource_subscriptions(service_app: FastAPI, era: str) -> None:
    async with connect(server_for(service_app), era) as client:
        if era == "legacy":
            resources = client.server_capabilities.model_dump(by_alias=True, exclude_none=True)["resources"]
        else:
            resources = (await client.session.send_discover(era))["capabilities"]["resources"]
        assert resources["subscribe"] is True


async def test_a_listen_on_readable_resources_is_acknowledged(service_app: FastAPI) -> None:
    uris = ["asrama://anak/A003", "asrama://anak/A003/hafalan", "asrama://absensi/2026-10-06", KAMAR]
    server = server_for(service_app, stdio_scope=AISYAH)
    async with connect(server, "2026-07-28") as client, client.listen(resource_subscriptions=uris) as subscription:
        assert subscription.honored.resource_subscriptions == uris


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("asrama://anak/A001", "Anak dengan id 'A001' tidak ditemukan"),  # outside the scope: as if absent
        ("asrama://anak/A001/pelanggaran", "tidak ditemukan"),
        ("asrama://anak/A999", "Anak dengan id 'A999' tidak ditemukan"),
        ("asrama://absensi/kemarin", "tanggal"),
        ("asrama://rahasia", "Unknown resource"),
    ],
)
async def test_a_listen_naming_anything_unreadable_is_refused(service_app: FastAPI, uri: str, reason: str) -> None:
    async with connect(server_for(service_app, stdio_scope=AISYAH), "2026-07-28") as client:
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["asrama://anak/A003", uri]):
                pass
        assert refused.value.error.code == INVALID_PARAMS
        assert refused.value.error.message.startswith(f"Tidak dapat berlangganan {uri}: ")
        assert reason in refused.value.error.message


async def test_a_handshake_subscription_is_gated_like_a_listen(service_app: FastAPI) -> None:
    async with connect(server_for(service_app, stdio_scope=AISYAH), "legacy") as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.subscribe_resource("asrama://anak/A003")
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource("asrama://anak/A002")
            await client.unsubscribe_resource("asrama://anak/A003")
            await client.unsubscribe_resource("asrama://anak/A002")  # never subscribed: nothing to end
        assert refused.value.error.code == INVALID_PARAMS
        assert "Anak dengan id 'A002' tidak ditemukan" in refused.value.error.message
