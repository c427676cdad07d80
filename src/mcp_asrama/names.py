"""How room and class names are compared, by the MCP server's scope check and the data service alike (neither
imports the other, both import this): whitespace collapsed and trimmed (`tidy`, the form names are stored in), then
case folded (`fold`, the key they are matched by: "Straße 1", "STRASSE 1" and "strasse  1" are one room)."""

from functools import lru_cache


def tidy(value: str) -> str:
    """`value` with runs of whitespace collapsed to one space and none at either end."""
    return " ".join(value.split())


@lru_cache(maxsize=4096)  # a school has a few hundred room and class names; rows repeat them
def fold(value: str) -> str:
    """The key a name is compared by: tidied and case folded (Unicode, so "ß" is "ss"; SQL lower() cannot)."""
    return tidy(value).casefold()
