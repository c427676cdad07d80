"""What the client keeps, pinned: the JSON schema of every model the client parses equals the stored snapshot
`tests/data/client_shapes.json`, key order included.

The MCP server's tool output models embed these shapes (a search result is a list of `AnakRingkas`, a rekap's
total a `JumlahKategori`), so their names, docstrings, fields and field order are part of the tools' wire. After a
deliberate change, regenerate: `ASRAMA_TEST_WRITE_SHAPES=1 pytest <this file>`.
"""

import inspect
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcp_asrama.client import feed, models

SNAPSHOT = Path(__file__).parent.parent / "data" / "client_shapes.json"


def _schemas() -> dict[str, Any]:
    found = {
        f"models.{name}": shape
        for name, shape in vars(models).items()
        if inspect.isclass(shape) and issubclass(shape, BaseModel) and shape is not BaseModel and name[0] != "_"
    }
    found["feed.Perubahan"] = feed.Perubahan
    return {name: found[name].model_json_schema() for name in sorted(found)}


def test_every_client_shape_equals_the_snapshot() -> None:
    schemas = _schemas()
    if os.environ.get("ASRAMA_TEST_WRITE_SHAPES"):
        SNAPSHOT.write_text(json.dumps(schemas, indent=1, ensure_ascii=False) + "\n")
    stored = json.loads(SNAPSHOT.read_text())
    assert sorted(schemas) == sorted(stored)
    for name, schema in stored.items():
        assert json.dumps(schemas[name]) == json.dumps(schema), name
