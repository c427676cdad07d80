"""Every capture the README and the docs show is what the product prints now: scripts/captures runs the real
product (the demo school on a temp database, the data service on a free port, the stdio server, probe, the audit
commands) and a page whose capture differs fails here with the diff. `python -m scripts.captures` rewrites them.
The real login of docs/deploying.md (scripts/captures/login.py) is checked on its own, skipped without Node's
oidc-provider, mcp-remote and the Inspector (set up as .ci/run does)."""

import os
from pathlib import Path

import pytest
from scripts.captures import PAGES, capture_all, differences, names, rewritten
from scripts.captures.login import NAMES as LOGIN
from scripts.captures.login import deploying_oidc
from scripts.captures.shown import CAPTURES

LOGIN_NEEDS = ("ASRAMA_TEST_OIDC", "ASRAMA_TEST_MCP_REMOTE", "ASRAMA_TEST_INSPECTOR")

STALE = """Before.
<!-- capture: contoh -->
```text
$ old command
old output
```
<!-- /capture -->
After.
"""


def test_a_capture_block_is_rewritten_and_nothing_else() -> None:
    new = rewritten(STALE, {"contoh": "$ new command\nnew output"})
    assert new == STALE.replace("old command\nold output", "new command\nnew output")
    assert rewritten(new, {"contoh": "$ new command\nnew output"}) == new
    assert names(new) == ["contoh"]


def test_a_stale_page_shows_as_a_diff(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(STALE)
    pages = [page]
    diff = differences({"contoh": "$ new command\nnew output"}, pages, root=tmp_path)
    assert "-old output\n" in diff and "+new output\n" in diff and "page.md" in diff
    assert differences({"contoh": "$ old command\nold output"}, pages, root=tmp_path) == ""


def test_capture_names_are_unique_across_the_pages() -> None:
    shown = [name for page in PAGES for name in names(page.read_text())]
    assert len(shown) >= 5
    assert len(shown) == len(set(shown))


@pytest.mark.e2e
def test_every_capture_shown_is_what_the_product_prints() -> None:
    captured = capture_all([make for make in CAPTURES if make is not deploying_oidc])
    shown = {name for page in PAGES for name in names(page.read_text())}
    assert shown == {*captured, *LOGIN}, "a capture on a page with no run behind it, or a run no page shows"
    diff = differences(captured)
    assert diff == "", f"a capture no longer matches (run: .venv/bin/python -m scripts.captures):\n{diff}"


@pytest.mark.e2e
@pytest.mark.skipif(
    not all(os.environ.get(need) for need in LOGIN_NEEDS),
    reason=f"the real login's capture needs {', '.join(LOGIN_NEEDS)} (set by .ci/run from scripts/*.sh)",
)
def test_the_real_login_shown_is_what_the_product_prints() -> None:
    captured = capture_all([deploying_oidc])
    assert set(captured) == set(LOGIN)
    diff = differences(captured)
    assert diff == "", f"the real login no longer matches (run: .venv/bin/python -m scripts.captures):\n{diff}"
