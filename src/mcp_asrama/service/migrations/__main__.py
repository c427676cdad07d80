"""Alembic's command line on the packaged migrations, without an alembic.ini:

    .venv/bin/python -m mcp_asrama.service.migrations revision --autogenerate -m "pelanggaran"
    .venv/bin/python -m mcp_asrama.service.migrations check
    .venv/bin/python -m mcp_asrama.service.migrations history

A new revision is numbered after the last one (0002, 0003, ...) unless --rev-id is given. `revision --autogenerate`
and `check` compare models.py with a scratch SQLite database built by the revisions, unless `-x db=URL` names one
(at head) to compare with. Other commands act on `-x db=URL`, else the service's database (ASRAMA_DB_URL, else the
default file); the service upgrades its database by itself on start (or `mcp-asrama service --upgrade`).
"""

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path


def _next_id() -> str:
    from mcp_asrama.service.migrations import scripts

    numbers = [int(s.revision) for s in scripts().walk_revisions() if s.revision.isdigit()]
    return f"{max(numbers, default=0) + 1:04d}"


def main(argv: Sequence[str] | None = None) -> int:
    from alembic.config import CommandLine

    from mcp_asrama.service.migrations import config

    command_line = CommandLine(prog="python -m mcp_asrama.service.migrations")
    options = command_line.parser.parse_args(argv)
    if not hasattr(options, "cmd"):
        command_line.parser.error("too few arguments")
    name = options.cmd[0].__name__
    if name == "revision" and not options.rev_id:
        options.rev_id = _next_id()
    x_args = options.x or []
    with tempfile.TemporaryDirectory() as scratch:
        compares = name == "check" or (name == "revision" and options.autogenerate)
        if compares and not any(arg.startswith("db=") for arg in x_args):
            from mcp_asrama.service.db import init_schema, make_engine

            url = f"sqlite:///{Path(scratch) / 'scratch.db'}"
            engine = make_engine(url)
            init_schema(engine)
            engine.dispose()
            options.x = [*x_args, f"db={url}"]
        cfg = config()
        cfg.cmd_opts = options
        command_line.run_cmd(cfg, options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
