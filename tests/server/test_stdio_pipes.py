"""The thread-free stdio transport's line reader: lines as the SDK reads them, an overlong line skipped through its
newline whether it arrives whole or in pieces, the last line without a newline kept."""

import asyncio

import pytest

from mcp_asrama.server.stdio_pipes import OVERLONG, _Lines


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ([b'{"a": 1}\n{"b": 2}\n'], ['{"a": 1}\n', '{"b": 2}\n']),
        ([b"a" * 50 + b"\nok\n"], [OVERLONG, "ok\n"]),  # the whole overlong line already buffered
        ([b"a" * 20, b"a" * 30, b"a" * 30 + b"\nok\n"], [OVERLONG, "ok\n"]),  # arriving in pieces
        ([b"short\n", b"a" * 100], ["short\n", OVERLONG]),  # the stream ends inside an overlong line
        ([b"x\n", b"last"], ["x\n", "last"]),
        ([b"\xff\xfe\n"], ["\ufffd\ufffd\n"]),  # not UTF-8: replaced, as the SDK's reader does
    ],
)
def test_lines(chunks: list[bytes], lines: list[str]) -> None:
    async def read() -> list[str]:
        reader = asyncio.StreamReader(limit=16)
        for chunk in chunks:
            reader.feed_data(chunk)
        reader.feed_eof()
        return [line async for line in _Lines(reader)]

    assert asyncio.run(read()) == lines
