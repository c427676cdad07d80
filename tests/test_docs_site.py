"""The docs as a site: `mkdocs build --strict` passes (a broken link or anchor, or a page left out of the nav,
fails it), and the README stays a short front page whose map links every page."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\((docs/[^)#]+\.md)(?:#[^)]*)?\)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)]
    env = {"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(site.parent)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_site_builds_strict_with_every_page(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "WARNING" not in done.stderr
    for page in DOCS.glob("*.md"):
        built = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
        assert (tmp_path / "site" / built).is_file(), page.name


def test_a_broken_anchor_fails_the_build(tmp_path: Path) -> None:
    """The strictness is real: the same site with one link to an anchor no page has does not build."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    index = tmp_path / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [nothing](server.md#no-such-section).\n")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-section" in done.stderr


def test_the_readme_is_short_and_maps_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    linked = set(LINK.findall(readme))
    assert all((ROOT / link).is_file() for link in linked), linked
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md")} - {"docs/index.md"}
    assert pages <= linked, pages - linked
