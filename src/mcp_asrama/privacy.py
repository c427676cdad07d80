"""Output discipline: only declared fields leave (models with `extra="ignore"`), and no result outgrows its budget.

Pure functions, no I/O.
"""

from collections.abc import Sequence
from functools import cache
from typing import Any

import pydantic_core
from pydantic import BaseModel, TypeAdapter

# Characters of JSON text one result may carry to the model (~5,000 tokens).
RESULT_BUDGET = 20_000


def json_text(model: BaseModel) -> str:
    """Compact JSON, non-ASCII kept as is: the text the model reads."""
    return model.model_dump_json(exclude_none=True)


def json_of(data: Any) -> str:
    """Compact JSON of JSON-mode data (from `model_dump(mode="json")`), non-ASCII kept: as `json_text` writes it."""
    return pydantic_core.to_json(data).decode()


@cache
def _list_of(kind: type[BaseModel]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[kind])  # type: ignore[valid-type]


def fitting_count(items: Sequence[BaseModel], budget: int) -> int:
    """How many leading `items` fit in `budget` characters of compact JSON (at least one if any): each item's JSON
    plus one separator. Usually all do, which one serialization of the list shows (its text is exactly that sum
    plus one); only a list over the budget is measured item by item."""
    kinds = {type(item) for item in items}
    if len(kinds) == 1:  # an adapter of the exact type serializes each item as json_text does
        whole = _list_of(kinds.pop()).dump_json(list(items), exclude_none=True)
        if len(whole.decode()) - 1 <= budget:
            return len(items)
    used = 0
    for count, item in enumerate(items):
        used += len(json_text(item)) + 1
        if used > budget:
            return max(count, 1)
    return len(items)
