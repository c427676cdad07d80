"""docs/first-day.md's Linux, macOS and Windows tabs, checked where they cannot run: every `mcp-asrama` line
parses with our CLI (subcommand, flags, values), every `make` target exists, the wheel named is the one `make dist`
builds for this version, the commands run from the virtual environment the tab makes, and Claude Desktop's file is
where `claude-config` says it is on that OS. tests/e2e/test_wheel.py runs the Linux tab's wheel lines."""

import argparse
import re
import shlex
import sys
from pathlib import Path

import pytest

from mcp_asrama import __version__, cli
from mcp_asrama.ops import claude_config

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "first-day.md"
WHEEL = f"mcp_asrama-{__version__}-py3-none-any.whl"
PLATFORMS = {"Linux": "linux", "macOS": "darwin", "Windows": "win32"}
TAB = re.compile(r'^=== "([^"]+)"\n((?:\n|    .*\n)+)', re.MULTILINE)
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
COMMANDS = ("mcp-asrama", "mcp-asrama.exe")


def tabs(text: str) -> dict[str, str]:
    """Each tab's content, unindented."""
    return {name: re.sub(r"^    ", "", body, flags=re.MULTILINE) for name, body in TAB.findall(text)}


def blocks(tab: str) -> list[list[list[str]]]:
    """The tab's code blocks, each a list of its commands' words (sh words, or PowerShell's split at spaces with
    quotes taken off); comments and blank lines left out."""
    found = []
    for language, code in FENCE.findall(tab):
        if language == "powershell":
            split = [
                [w.strip('"') for w in shlex.split(line, comments=True, posix=False)] for line in code.splitlines()
            ]
        else:
            split = [shlex.split(line, comments=True) for line in code.splitlines()]
        found.append([words for words in split if words])
    return found


def wheel_block(tab: str) -> list[list[str]]:
    """The block that installs the wheel: from `... -m venv DIR` to `claude-config`."""
    return next(block for block in blocks(tab) if " -m venv " in f" {' '.join(block[0])} ")


def program(word: str) -> str:
    """The file name of a command word, with / or \\ as the separator."""
    return re.split(r"[/\\]", word)[-1]


def parse(args: list[str]) -> argparse.Namespace:
    """`args` parsed by our CLI, or the test failed naming them (a subcommand, flag or value we do not have)."""
    try:
        return cli.build_parser().parse_args(args)
    except SystemExit:
        pytest.fail(f"mcp-asrama {' '.join(args)}: not a command of ours")


PAGE_TABS = tabs(PAGE.read_text())


def test_the_page_has_the_three_tabs() -> None:
    assert set(PAGE_TABS) == set(PLATFORMS)


@pytest.mark.parametrize("name", PLATFORMS)
def test_every_command_of_the_tab_is_one_of_ours(name: str) -> None:
    makefile = (ROOT / "Makefile").read_text()
    used = set()
    for block in blocks(PAGE_TABS[name]):
        for words in block:
            if program(words[0]) in COMMANDS:
                used.add(parse(words[1:]).command)
            elif words[0] == "make":
                assert all(re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE) for target in words[1:])
    assert {"demo", "claude-config"} <= used


@pytest.mark.parametrize("name", PLATFORMS)
def test_the_wheel_lines_install_this_versions_wheel_and_run_from_its_venv(name: str) -> None:
    create, install, *rest = wheel_block(PAGE_TABS[name])
    venv, exe = create[-1], ".exe" if name == "Windows" else ""
    scripts = f".\\{venv}\\Scripts\\" if name == "Windows" else f"{venv}/bin/"
    assert install[:4] == [f"{scripts}python{exe}", "-m", "pip", "install"]
    assert program(install[4]) == WHEEL
    ours = [words for words in rest if program(words[0]) in COMMANDS]
    assert [words[0] for words in ours] == [scripts + program(words[0]) for words in ours]
    assert [words[1] for words in ours] == ["demo", "claude-config"]


@pytest.mark.parametrize("name", PLATFORMS)
def test_claude_desktops_file_is_where_claude_config_says(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", PLATFORMS[name])
    location = claude_config.config_location()
    tab = PAGE_TABS[name]
    assert f"Claude Desktop's file: `{location}`" in tab
    opened = [words[-1] for block in blocks(tab) for words in block if words[0] in ("open", "notepad")]
    assert opened == ([] if name == "Linux" else [location.replace("%APPDATA%", "$env:APPDATA")])


def test_the_words_of_a_powershell_line_keep_its_backslashes() -> None:
    tab = '```powershell\n.\\venv\\Scripts\\mcp-asrama.exe claude-config   # x\nnotepad "$env:A\\b c"\n```\n'
    assert blocks(tab) == [[[".\\venv\\Scripts\\mcp-asrama.exe", "claude-config"], ["notepad", "$env:A\\b c"]]]
