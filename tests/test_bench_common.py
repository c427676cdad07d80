"""What the benchmark scripts share (bench/common.py): a run stopped by SIGTERM (a `kill`, a CI timeout) stops the
processes it started and removes its temporary folder, as at a normal end."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

# A run as the scripts make one: a child process (common.process) and a temporary folder removed in `finally`.
SCRIPT = textwrap.dedent(
    """
    import asyncio, shutil, sys, tempfile
    sys.path.insert(0, sys.argv[1])
    import common

    async def main() -> int:
        folder = tempfile.mkdtemp(prefix="asrama-bench-test-")
        try:
            with common.process(["sleep", "120"], {}, None) as child:
                print(child.pid, folder, flush=True)
                await asyncio.sleep(120)
        finally:
            shutil.rmtree(folder)
        return 0

    common.run(main)
    """
)


def test_a_run_stopped_by_sigterm_stops_its_processes_and_removes_its_folder() -> None:
    run = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(BENCH)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert run.stdout is not None
        pid, folder = run.stdout.readline().split()
        assert Path(folder).is_dir()
        os.kill(run.pid, signal.SIGTERM)
        _, errors = run.communicate(timeout=30)
    finally:
        run.kill()

    assert run.returncode == 128 + signal.SIGTERM, errors
    assert "terminated (SIGTERM)" in errors
    assert not Path(folder).exists()
    assert not Path(f"/proc/{pid}").exists()  # stopped and reaped: no zombie left either
