"""The units of a scoped read and how its upstream requests run together.

A unit is the (kelas, kamar) filter pair of one upstream request, each one value, several, or none. Two units meet
where a student can be in both (a room in scope *and* a class in scope); `gather` runs a read's requests
concurrently and raises the first failure as itself.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio

from mcp_asrama.client.client import Values
from mcp_asrama.names import fold

Unit = tuple[Values, Values]  # (kelas, kamar) filters of one upstream request: each one value, several, or none
T = TypeVar("T")


async def gather(calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run `calls` concurrently; their results in order. The first failure is raised as itself (not as a group)
    and cancels the others."""
    if len(calls) == 1:
        return [await calls[0]()]
    results: list[Any] = [None] * len(calls)

    async def run(index: int) -> None:
        results[index] = await calls[index]()

    try:
        async with anyio.create_task_group() as group:
            for index in range(len(calls)):
                group.start_soon(run, index)
    except BaseExceptionGroup as failures:
        raise _first(failures) from None
    return results


def _first(failures: BaseExceptionGroup[Any]) -> BaseException:
    first = failures.exceptions[0]
    return _first(first) if isinstance(first, BaseExceptionGroup) else first


def _values(value: Values) -> list[str | None]:
    """The values of one filter: [None] for none."""
    if value is None:
        return [None]
    return [value] if isinstance(value, str) else list(value)


def as_filter(values: Sequence[str]) -> Values:
    """Values as one filter: a single one as itself."""
    return values[0] if len(values) == 1 else tuple(values)


def _meet(first: Values, second: Values) -> Values | bool:
    """Both filters at once: the values of `first` that `second` allows, None for no filter, False for nothing."""
    if first is None or second is None:
        return second if first is None else first
    allowed = {fold(v) for v in _values(second) if v is not None}
    kept = [v for v in _values(first) if v is not None and fold(v) in allowed]
    return as_filter(kept) if kept else False


def overlap(room: Unit, klass: Unit) -> Unit | None:
    """The students both units cover, as one unit; None when no student can be in both."""
    kelas, kamar = _meet(room[0], klass[0]), _meet(room[1], klass[1])
    if kelas is False or kamar is False:
        return None
    return (kelas, kamar)  # type: ignore[return-value]
