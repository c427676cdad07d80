"""`python -m mcp_asrama` is the `mcp-asrama` command."""

from mcp_asrama.cli import main

raise SystemExit(main())
