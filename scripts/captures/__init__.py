"""The captures the docs show, regenerated from a real run: `python -m scripts.captures` rewrites every block
between `<!-- capture: NAME -->` and `<!-- /capture -->` in the README and docs/*.md from what the product prints
now (`scripts/captures/shown.py` says what each NAME runs); `--check` rewrites nothing and exits 1 with a diff
when a page shows something else. tests/test_captures.py runs the check."""

import difflib
import re
from collections.abc import Callable
from pathlib import Path

from scripts.captures.run import ROOT, Run, demo_run
from scripts.captures.shown import CAPTURES, OWN_SERVICE

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- capture: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /capture -->)", re.DOTALL)
FENCE = re.compile(r"\A(```\w*\n)(.*)\n```\n\Z", re.DOTALL)


def names(text: str) -> list[str]:
    """The capture names of a page, in order."""
    return [m["name"] for m in BLOCK.finditer(text)]


def rewritten(text: str, captured: dict[str, str]) -> str:
    """`text` with each capture's fenced block holding `captured[NAME]` (its fence's language kept); a block not
    in `captured` stays as it is."""

    def block(match: re.Match[str]) -> str:
        if match["name"] not in captured:
            return match.group(0)
        fence = FENCE.match(match["body"])
        opening = fence.group(1) if fence else "```text\n"
        return f"{match.group(1)}{opening}{captured[match['name']]}\n```\n{match.group(4)}"

    return BLOCK.sub(block, text)


def capture_all(makers: list[Callable[[Run], dict[str, str]]] = CAPTURES) -> dict[str, str]:
    """The captures of `makers` (every one by default), each from a run of its own."""
    captured: dict[str, str] = {}
    for make in makers:
        with demo_run(service=make not in OWN_SERVICE) as run:
            captured |= make(run)
    return captured


def differences(captured: dict[str, str], pages: list[Path] = PAGES, root: Path = ROOT) -> str:
    """A unified diff of every page whose captures differ from `captured` ("" when none does)."""
    diff: list[str] = []
    for page in pages:
        text = page.read_text()
        name = page.relative_to(root).as_posix()
        diff += difflib.unified_diff(text.splitlines(True), rewritten(text, captured).splitlines(True), name, name)
    return "".join(diff)


def write(captured: dict[str, str], pages: list[Path] = PAGES) -> list[Path]:
    """Rewrite the pages whose captures changed; the pages rewritten."""
    changed = []
    for page in pages:
        text = page.read_text()
        new = rewritten(text, captured)
        if new != text:
            page.write_text(new)
            changed.append(page)
    return changed
