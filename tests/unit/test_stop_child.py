"""``kg_platform._process.stop_child``: a child is stopped with SIGTERM, and killed when it
ignores it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from kg_platform._process import stop_child


def test_a_child_that_honours_sigterm_ends_with_it() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stop_child(proc, timeout=10)
    assert proc.returncode == -signal.SIGTERM


def test_a_child_that_ignores_sigterm_is_killed_after_the_timeout() -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    started = time.monotonic()
    stop_child(proc, timeout=0.5)
    assert proc.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 30
