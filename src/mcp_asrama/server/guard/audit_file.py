"""The audit file on disk, below the chain: an exclusive `flock` between processes, its last lines read backwards,
and a warning when its disk runs low."""

import logging
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LOW_SPACE = "audit log's disk is nearly full: free space before the log stops every data request"
_MAX_TAIL = 16 * 1024 * 1024

if sys.platform == "win32":  # pragma: no cover - no flock: one writer process per file

    def flock(fd: int) -> None:
        pass

    def unlock(fd: int) -> None:
        pass

else:
    import fcntl

    def flock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _read_at(fd: int, offset: int, size: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def last_lines(fd: int, size: int, want: int = 2) -> list[tuple[int, bytes, bool]]:
    """Up to `want` last lines as (offset, bytes, ends with a newline), oldest first, read backwards."""
    buffer, start = b"", size
    while start > 0 and buffer.count(b"\n", 0, max(len(buffer) - 1, 0)) < want and size - start < _MAX_TAIL:
        step = min(64 * 1024, start)
        start -= step
        buffer = _read_at(fd, start, step) + buffer
    terminated = buffer.endswith(b"\n")
    parts = (buffer[:-1] if terminated else buffer).split(b"\n")
    lines, position = [], start
    for part in parts:
        lines.append((position, part, True))
        position += len(part) + 1
    lines = lines[1:] if start > 0 else lines  # the first begins mid-line
    if lines:
        lines[-1] = (*lines[-1][:2], terminated)
    return lines[-want:]


@dataclass
class FreeSpace:
    """Warns when the audit file's file system runs low: below `min_bytes` or `min_ratio` of its size free.

    Checked at most once every `every` seconds (so it warns at most once per interval); never raises.
    """

    min_bytes: int = 512 * 1024 * 1024
    min_ratio: float = 0.05
    every: float = 60.0
    _due: float = float("-inf")

    def check(self, path: Path) -> None:
        now = time.monotonic()
        if now < self._due:
            return
        self._due = now + self.every
        try:
            usage = shutil.disk_usage(path.parent)
        except OSError:
            return  # a missing folder: the write itself reports it
        if usage.free < self.min_bytes or usage.free < usage.total * self.min_ratio:
            percent = round(100 * usage.free / usage.total, 1) if usage.total else 0.0
            log.warning(LOW_SPACE, extra={"path": str(path), "free_bytes": usage.free, "free_percent": percent})
