"""Runs the lit/FileCheck suite under tests/filecheck as part of pytest."""

import os
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"


def test_filecheck_suite():
    jobs = str(max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
    proc = subprocess.run(
        [sys.executable, "-c", "import lit.main; lit.main.main()", "-v", "-j", jobs, str(SUITE)],
        capture_output=True,
        text=True,
    )
    report = proc.stdout[-20000:] + proc.stderr[-5000:]
    assert proc.returncode == 0, f"lit/FileCheck suite failed:\n{report}"
    assert "Passed" in proc.stdout, report
