"""Files that hold personal data or secrets: folders 0700, files 0600, whatever the umask."""

import os
import stat
from pathlib import Path

PRIVATE_FOLDER, PRIVATE_FILE = 0o700, 0o600


def private_folder(path: Path) -> None:
    """Create `path` (with its parents) readable by this user only; a folder that exists is left as it is."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    for folder in missing:
        folder.chmod(PRIVATE_FOLDER)  # mkdir's mode is narrowed by the umask, never widened: set it exactly


def create_private(path: Path) -> bool:
    """Create an empty file readable and writable by this user only; False when it already exists."""
    private_folder(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return False
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where the mode bits mean little
            os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return True


def write_private(path: Path, text: str) -> None:
    """Write `text` to a new file that only this user can read (fails if the file exists)."""
    if not create_private(path):
        raise FileExistsError(path)
    path.write_text(text, encoding="utf-8")


def open_to_others(path: Path) -> bool:
    """Whether group or other users may read or write `path`."""
    return bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
