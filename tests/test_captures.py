"""Every capture the README and the docs show is what the product prints now: scripts/captures runs the real
product (the demo school on a temp database, the data service on a free port, the stdio server, probe, the audit
commands) and a page whose capture differs fails here with the diff. `python -m scripts.captures` rewrites them."""

from pathlib import Path

import pytest
from scripts.captures import PAGES, capture_all, differences, names, rewritten

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
    captured = capture_all()
    shown = {name for page in PAGES for name in names(page.read_text())}
    assert shown == set(captured), "a capture on a page with no run behind it, or a run no page shows"
    diff = differences(captured)
    assert diff == "", f"a capture no longer matches (run: .venv/bin/python -m scripts.captures):\n{diff}"
