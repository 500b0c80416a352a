"""Real servers for the serving tests: a uvicorn server in a thread of the test process, or a
``kgp`` server command in a subprocess, each on a free loopback port."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from kg_platform._process import free_port


@contextmanager
def uvicorn_thread(app: Any) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yield its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped while starting"
        assert time.monotonic() < deadline, "uvicorn did not start in 120 s"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    """Wait until ``url`` answers any HTTP status (the server process must stay alive)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} did not answer in {timeout:.0f} s") from None
            time.sleep(0.2)


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    """Stop a server subprocess this test started (by its own handle); return its output."""
    if proc.poll() is None:
        proc.terminate()
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate(timeout=30)
        return out or "", err or ""
    out, err = proc.communicate(timeout=30)
    return out or "", err or ""
