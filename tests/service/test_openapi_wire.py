"""The service's wire, pinned: its OpenAPI description equals the stored snapshot `tests/data/openapi.json`.

Moving shapes between modules (the contract, the service's schemas) must not change a route, a field or a component
name. Compared as parsed JSON with `required` as the set it is (a service schema extends a contract shape, so its
fields come after the shape's). After a deliberate change of the wire, regenerate the snapshot:
`ASRAMA_TEST_WRITE_OPENAPI=1 pytest <this file>`.
"""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from mcp_asrama.config import ServiceSettings
from mcp_asrama.service.app import create_app
from tests.conftest import TOKEN, service_client

SNAPSHOT = Path(__file__).parent.parent / "data" / "openapi.json"


def _required_as_sets(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: sorted(value) if key == "required" and isinstance(value, list) else _required_as_sets(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_required_as_sets(v) for v in node]
    return node


async def _openapi(tmp_path: Path) -> dict[str, Any]:
    app = create_app(ServiceSettings(db_url=f"sqlite:///{tmp_path / 'wire.db'}", service_token=TOKEN))
    try:
        async with service_client(app) as client:
            response = await client.get("/openapi.json")
    finally:
        app.state.engine.dispose()
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    document["info"].pop("version", None)
    return _required_as_sets(document)  # type: ignore[no-any-return]


@pytest.mark.anyio
async def test_the_openapi_description_equals_the_snapshot(tmp_path: Path) -> None:
    document = await _openapi(tmp_path)
    if os.environ.get("ASRAMA_TEST_WRITE_OPENAPI"):
        SNAPSHOT.write_text(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    stored = json.loads(SNAPSHOT.read_text())
    assert document["components"]["schemas"].keys() == stored["components"]["schemas"].keys()
    for name, schema in stored["components"]["schemas"].items():
        assert document["components"]["schemas"][name] == schema, name
    assert document == stored
