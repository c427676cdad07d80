"""A contract domain's feature module joins the server by itself: after the modules listed by hand, before the
proposals' tools and the reports, so every listed tool keeps its place in tools/list."""

import pytest

from mcp_asrama.contract import DOMAINS
from mcp_asrama.server import features
from mcp_asrama.server.features import izin, pelanggaran, usulan_tools
from tests.server.conftest import connect, server_for
from tests.server.support import TOOLS, leaky_upstream

pytestmark = pytest.mark.anyio


def test_a_domain_module_the_lists_do_not_name_joins_in_the_contracts_order() -> None:
    without = tuple(m for m in features.LISTED if m not in (pelanggaran, izin))
    assert features._joined(without)[:2] == (izin, pelanggaran)  # the contract names izin first
    assert features._joined(features.LISTED) == features.JOINED


def test_joined_modules_come_after_the_listed_ones_and_before_the_proposals() -> None:
    assert features.DOMAINS[: len(features.LISTED)] == features.LISTED
    assert features.DOMAINS[-2:] == (usulan_tools, features.laporan)
    assert features.TOLD[-2:] == (usulan_tools, features.laporan)
    assert set(features.TOLD) == set(features.DOMAINS)
    names = {d.name for d in DOMAINS}
    assert all(m.__name__.rsplit(".", 1)[1] in names for m in features.JOINED)


async def test_the_listed_tools_keep_their_places_and_joined_ones_follow(era: str) -> None:
    async with connect(server_for(leaky_upstream()), era) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names[: len(TOOLS)] == TOOLS
    assert len(names) == len(TOOLS) or features.JOINED
