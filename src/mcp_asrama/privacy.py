"""Output discipline: only declared fields leave (models with `extra="ignore"`), and no result outgrows its budget.

Pure functions, no I/O.
"""

from collections.abc import Sequence

from pydantic import BaseModel

# Characters of JSON text one result may carry to the model (~5,000 tokens).
RESULT_BUDGET = 20_000


def json_text(model: BaseModel) -> str:
    """Compact JSON, non-ASCII kept as is: the text the model reads."""
    return model.model_dump_json(exclude_none=True)


def fitting_count(items: Sequence[BaseModel], budget: int) -> int:
    """How many leading `items` fit in `budget` characters of compact JSON (at least one if any)."""
    used = 0
    for count, item in enumerate(items):
        used += len(json_text(item)) + 1
        if used > budget:
            return max(count, 1)
    return len(items)
