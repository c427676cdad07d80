"""This installation's `mcp-asrama` command: what `probe` and Claude Desktop start, and what banners print."""

import shutil
import sys
import sysconfig
from pathlib import Path

NAME = "mcp-asrama"


def executable() -> list[str]:
    """The absolute command that runs this installation: its console script, else `python -m mcp_asrama`."""
    scripts = Path(sysconfig.get_path("scripts"))
    for name in (NAME, f"{NAME}.exe"):
        if (scripts / name).is_file():
            return [str((scripts / name).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "mcp_asrama"]


def resolve(command: list[str]) -> list[str]:
    """`command` with a leading `mcp-asrama` that PATH does not find replaced by this installation's executable
    (after `make run` the console script is in .venv/bin, not on PATH)."""
    if command and command[0] == NAME and shutil.which(NAME) is None:
        return [*executable(), *command[1:]]
    return command


def shown() -> str:
    """How a person types this installation's command from the current folder: `mcp-asrama` when PATH finds this
    one, else from the folder that holds its virtual environment `.venv/bin/mcp-asrama`, else its absolute path."""
    command = executable()
    if len(command) > 1:
        return " ".join(command)
    script = Path(command[0])
    found = shutil.which(NAME)
    if found is not None and Path(found).resolve() == script.resolve():
        return NAME
    venv = Path(sys.prefix)
    if script.is_relative_to(venv) and venv.parent == Path.cwd():  # typed in the project folder, as after make run
        return str(script.relative_to(venv.parent))
    return str(script)
