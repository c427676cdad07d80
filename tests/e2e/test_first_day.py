"""docs/first-day.md from top to bottom, in one run, as a new user on a fresh machine: a fresh HOME (the data under
~/.local/share/mcp-asrama, no XDG_DATA_HOME), the demo running, every runnable block typed in order in the project
folder, the roll call answered `y` at its question as the page says a person does, and the section's block that
needs the demo stopped (the real restore) run with it stopped, then the demo started again. Only the ports are
rewritten (the demo runs on free ones). After each step, what it should have achieved is checked against the
running data service: the sheet's students served, the roll call's record in the history, the backup and both
restores holding the students, the restored database served."""

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.e2e.conftest import EXECUTABLE, clean_env, free_port, start, stop, wait_until_up
from tests.e2e.test_readme import commands

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "first-day.md"
FENCE = re.compile(r"^```(sh runnable|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCRIPTS = Path(EXECUTABLE).parent
WARNING = "warning: ignoring the columns that are not of 'anak': No, NIS (--ketat refuses such a file)"
STUDENT = "S25003"  # Hafizah Kamila, a student of examples/siswa-sekolah.xlsx


def steps() -> list[tuple[str, list[str]]]:
    """(section, commands) of each block run: the runnable ones, and section 6's plain one (the demo stopped)."""
    text = PAGE.read_text()
    found = []
    for match in FENCE.finditer(text):
        section = re.findall(r"^## (\d)\.", text[: match.start()], re.MULTILINE)[-1]
        runnable = match.group(1) == "sh runnable"
        if runnable or section == "6":
            found.append((section if runnable else "6-stopped", commands(match.group(2))))
    return found


class Demo:
    """`mcp-asrama demo` on free ports with HOME in tmp, stopped and started again as the page says."""

    def __init__(self, home: Path) -> None:
        self.home, self.service, self.mcp = home, free_port(), free_port()
        self.env = clean_env(HOME=str(home), MAKEFLAGS="")
        self.env.pop("XDG_DATA_HOME", None)
        self.process: subprocess.Popen[Any] | None = None

    @property
    def data(self) -> Path:
        return self.home / ".local" / "share" / "mcp-asrama"

    def start(self) -> None:
        log = self.home / "demo.log"
        command = [EXECUTABLE, "demo", "--port", str(self.service), "--mcp-port", str(self.mcp)]
        self.process = start(command, self.env, log)
        wait_until_up(self.mcp, self.process, log)
        wait_until_up(self.service, self.process, log)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def get(self, path: str) -> Any:
        """A GET of the data service with the token it keeps."""
        token = (self.data / "service-token").read_text().strip()
        answer = httpx2.get(f"http://127.0.0.1:{self.service}{path}", headers={"Authorization": f"Bearer {token}"})
        answer.raise_for_status()
        return answer.json()

    def type(self, line: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
        """`line` typed in the project folder, in a shell without `mcp-asrama` on PATH; `answer` typed at its prompt."""
        line = line.replace("127.0.0.1:8000", f"127.0.0.1:{self.service}")
        line = line.replace("127.0.0.1:8001", f"127.0.0.1:{self.mcp}")
        path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != SCRIPTS)
        done = subprocess.run(
            ["bash", "-c", "set -o pipefail; " + line],
            cwd=ROOT,
            env={**self.env, "PATH": path},
            input=answer or "",
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr
        return done


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    running = Demo(tmp_path / "home")
    running.home.mkdir()
    running.start()
    try:
        yield running
    finally:
        running.stop()


def test_the_page_has_each_step_of_the_first_day() -> None:
    sections = [section for section, _ in steps()]
    assert sections.count("6-stopped") == 1 and sections[-1] == "6-stopped"
    assert {"1", "3", "4", "6"} <= set(sections)
    assert WARNING in PAGE.read_text()  # the line the page shows is the one the import prints


def test_the_first_day_from_top_to_bottom(demo: Demo) -> None:
    seen: dict[str, str] = {}
    for section, lines in steps():
        for line in lines:
            if section == "6-stopped":
                if line.strip() == "make run":
                    demo.start()
                    continue
                demo.stop()  # Ctrl+C in the first terminal
            answer = "y\n" if "--tanya" in line else None
            done = demo.type(line, answer)
            seen[line] = done.stdout + done.stderr
            if "siswa-sekolah.xlsx" in line:
                assert done.stderr.count("warning:") == 1 and WARNING in done.stderr
                assert "siswa-sekolah.xlsx: 6 added, 0 updated (anak)" in done.stdout
                student = demo.get(f"/anak/{STUDENT}")
                assert (student["nama"], student["jenis_kelamin"], student["tanggal_lahir"]) == (
                    "Hafizah Kamila",
                    "P",
                    "2013-01-21",
                )
            if "--tool-name detail_anak" in line:
                assert "Hafizah Kamila" in done.stdout and "9900000000000103" not in done.stdout
            if "--tanya" in line:
                assert "Setujui? [y/N] y" in done.stderr and '"hasil":"ditulis"' in done.stdout
                history = demo.get(f"/absensi/2026-12-01/{STUDENT}/riwayat")["data"]
                assert [(h["status_baru"], h["keterangan_baru"]) for h in history] == [("sakit", "Demam")]
    outputs = "\n".join(seen.values())
    backups = list((demo.data / "cadangan").glob("asrama-*.db"))
    assert len(backups) == 1 and re.search(r"backed up .* students", outputs)
    counts = re.findall(r"restored .*?: revision \d+, (\d+) students", outputs)
    assert len(counts) == 2 and counts[0] == counts[1] and int(counts[0]) >= 312  # the demo's 300, and 12 imported
    assert (demo.data / "uji-pulih.db").is_file()
    assert list(demo.data.glob("asrama.db.sebelum-restore-*"))  # the replaced one kept beside it
    assert demo.get(f"/anak/{STUDENT}")["nama"] == "Hafizah Kamila"  # the restored database, served again
    assert demo.get(f"/absensi/2026-12-01/{STUDENT}/riwayat")["data"][0]["status_baru"] == "sakit"
