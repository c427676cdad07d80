"""What an audit line keeps of a request and its answer: the arguments, bounded and without what a person wrote
into a record or a secret (`bounded_arguments`), and the ids of the students an answer disclosed (`disclosed_ids`,
`named`). Ids and search terms only: never a note, a reason, a health detail or an usulan's key."""

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]  # (in json.decoder since 2.6; not in typeshed)
from typing import Any

from mcp_asrama.privacy import json_of

ID_KEYS = frozenset({"id", "id_anak"})
MAX_TEXT, MAX_KEYS, MAX_ID = 200, 16, 64
STUDENT_ARGUMENT = "id_anak"
_ID_MARKS = tuple(f'"{key}":"' for key in sorted(ID_KEYS))  # a string id's key and the value's opening quote
_STUDENT_URI = re.compile(r"\Aasrama://anak/([^/?#]+)")


def named_students(method: str, params: Mapping[str, Any]) -> list[str]:
    """The student a request names: an `id_anak` argument of a tool or prompt, or the id in an asrama://anak/ URI."""
    value: Any = None
    if method in ("tools/call", "prompts/get") and isinstance(params.get("arguments"), Mapping):
        value = params["arguments"].get(STUDENT_ARGUMENT)
    elif method == "resources/read" and isinstance(params.get("uri"), str):
        match = _STUDENT_URI.match(params["uri"])
        value = match.group(1) if match else None
    return [value[:MAX_ID]] if isinstance(value, str) and value else []


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """Caller-chosen text, bounded and encodable (a lone surrogate would make the line unwritable)."""
    text = text.encode("utf-8", "replace").decode()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded(value: Any) -> Any:
    """A search term as sent, cut short; nested values become short JSON text."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and abs(value) < 10**18):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, str):
        return clean(value)
    return clean(json.dumps(value, ensure_ascii=False, default=str))


# What a person wrote into a record (a note, a reason for leave, a complaint, its category and treatment, who
# examined or treated) may be personal, or health data; an usulan's key is a secret: never in the log.
WRITTEN_TEXT = frozenset(
    {"keterangan", "alasan", "keluhan", "kategori", "tindakan", "obat", "rujukan", "petugas", "penguji", "kunci"}
)


def without_written_text(value: Any) -> Any:
    """`value` with every `keterangan`/`alasan` left out, however deep."""
    if isinstance(value, Mapping):
        return {k: without_written_text(v) for k, v in value.items() if k not in WRITTEN_TEXT}
    if isinstance(value, list):
        return [without_written_text(v) for v in value]
    return value


def bounded_arguments(arguments: Any) -> Any:
    """Tool/prompt arguments for the log: at most 16 names, each value at most 200 characters."""
    if arguments is None:
        return None
    if not isinstance(arguments, Mapping):
        return bounded(arguments)
    items = list(arguments.items())
    kept = {clean(str(k), 64): bounded(v) for k, v in items[:MAX_KEYS]}
    if len(items) > MAX_KEYS:
        kept["…"] = f"+{len(items) - MAX_KEYS} more"
    return kept


def _texts(blocks: Any) -> Iterator[str]:
    """The text of content blocks, embedded resources included."""
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, Mapping):
            inner = block.get("resource") if block.get("type") == "resource" else block
            if isinstance(inner, Mapping) and isinstance(inner.get("text"), str):
                yield inner["text"]


def disclosed_ids(method: str, result: Mapping[str, Any]) -> list[str]:
    """The student ids a result carries: `id`/`id_anak` anywhere in its structured or JSON text content.

    A text that is the structuredContent's compact JSON as our tools send it (`asrama_server.tool_result`) is
    searched, not parsed (`_compact_ids`). Any other text is parsed once, its ids gathered as the parser builds each
    object (of a key sent twice, the last value, as JSON.parse reads it); `structuredContent` is walked only when no
    text was it or parsed equal to it.
    """
    structured: Any = None
    if method == "tools/call":
        structured = result.get("structuredContent")
        texts = _texts(result.get("content"))
    elif method == "resources/read":
        texts = _texts(result.get("contents"))
    elif method == "prompts/get":
        messages = result.get("messages")
        contents = [m.get("content") for m in messages if isinstance(m, Mapping)] if isinstance(messages, list) else []
        texts = _texts(contents)
    else:
        return []
    found: dict[str, None] = {}
    covered = structured is None
    sent = None if covered else _json_text(structured)
    for text in texts:
        if text == sent:
            _compact_ids(text, found)
            covered = True
            continue
        ids: dict[str, None] = {}
        try:
            parsed = json.loads(text, object_hook=_collecting(ids))
        except ValueError:
            continue  # prose (an error message naming an id discloses nothing)
        found.update(ids)
        covered = covered or parsed == structured
    if not covered:
        _walk(structured, found)
    return sorted(found)


def _json_text(structured: Any) -> str | None:
    """`structured` as our tools send it as text, or None when it cannot be (not JSON data)."""
    try:
        return json_of(structured)
    except ValueError:  # pydantic_core's serialization error; a lone surrogate
        return None


def _compact_ids(text: str, found: dict[str, None]) -> None:
    """Add the string ids of `text`, compact JSON as `json_of` writes it, to `found`, without parsing it: a
    `"id":"` (or `"id_anak":"`) right after `{` or `,` is a key and its string value (inside a string, that quote
    would be escaped: after a backslash), which the JSON decoder's own string scanner reads."""
    for mark in _ID_MARKS:
        at = text.find(mark)
        while at != -1:
            if text[at - 1] in "{,":
                value, _ = scanstring(text, at + len(mark))
                found[value[:MAX_ID]] = None
            at = text.find(mark, at + 1)


def _collecting(found: dict[str, None]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A `json.loads` object hook that adds each object's `id`/`id_anak` string values to `found`."""

    def collect(node: dict[str, Any]) -> dict[str, Any]:
        for key in ID_KEYS:
            value = node.get(key)
            if isinstance(value, str):
                found[value[:MAX_ID]] = None
        return node

    return collect


def _walk(value: Any, found: dict[str, None]) -> None:
    """Add the `id`/`id_anak` string values anywhere in `value` (JSON data, as Python objects) to `found`."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            for key, item in node.items():
                if key in ID_KEYS and isinstance(item, str):
                    found[item[:MAX_ID]] = None
                elif isinstance(item, Mapping | list | tuple):
                    stack.append(item)
        elif isinstance(node, list | tuple):
            stack.extend(node)
