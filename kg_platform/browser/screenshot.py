"""A screenshot of Neo4j Browser with the kg-platform guide open (``kgp browser screenshot``).

Drives a headless Chromium over the DevTools protocol (no Selenium/Playwright download): open
Browser, log in with the server's password, reload with ``?cmd=play&arg=<guide>`` (Browser keeps
the credentials for the session), wait for the guide's slides, capture a PNG. Used for
``docs/browser-guide.png``; needs Debian's ``chromium`` and the ``websockets`` package.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

from kg_platform._process import stop_child
from kg_platform.errors import ConfigError, KGPError


class _CDP:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        await self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(await self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise KGPError(f"DevTools {method} failed: {msg['error']}")
                return msg.get("result", {})

    async def js(self, expression: str) -> Any:
        res = await self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return res.get("result", {}).get("value")

    async def wait_js(self, expression: str, timeout: float, what: str) -> Any:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            value = await self.js(expression)
            if value:
                return value
            await asyncio.sleep(0.5)
        raise KGPError(f"timed out after {timeout:.0f}s waiting for {what}")


async def _run_in_editor(cdp: _CDP, command: str, timeout: float, *, wait: bool = True) -> None:
    """Type ``command`` into Browser's (Monaco) editor and press its Run button."""
    frames = await cdp.js("document.querySelectorAll('[data-testid=frame]').length") or 0
    await cdp.wait_js("!!document.querySelector('.monaco-editor textarea')", timeout, "the editor")
    await cdp.js("document.querySelector('.monaco-editor textarea').focus()")
    await cdp.call("Input.insertText", text=command)
    await asyncio.sleep(0.3)
    await cdp.js("document.querySelector('[data-testid=editor-Run]').click()")
    if wait:
        await cdp.wait_js(
            f"document.querySelectorAll('[data-testid=frame]').length > {frames}",
            timeout,
            f"the result of {command[:40]!r}",
        )
        await asyncio.sleep(4)  # let the graph layout settle


async def _shoot(
    devtools: str,
    browser_url: str,
    bolt: str,
    password: str,
    guide_url: str,
    out: Path,
    width: int,
    height: int,
    timeout: float,
    before: tuple[str, ...] = (),
) -> None:
    import websockets

    async with websockets.connect(devtools, max_size=64 * 2**20) as ws:
        cdp = _CDP(ws)
        await cdp.call("Page.enable")
        await cdp.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        user_bolt = bolt.replace("://", "://neo4j@", 1)  # Browser reads the user name
        await cdp.call("Page.navigate", url=f"{browser_url}?dbms={quote(user_bolt, safe='')}")
        await cdp.wait_js(
            "!!document.querySelector('input[type=password]')", timeout, "the connect form"
        )
        await cdp.js("document.querySelector('input[type=password]').focus()")
        await cdp.call("Input.insertText", text=password)
        await cdp.js(
            "[...document.querySelectorAll('button')]"
            ".find(b => /^connect$/i.test(b.textContent.trim())).click()"
        )
        try:
            await cdp.wait_js(
                "!document.querySelector('input[type=password]')", timeout, "the login to finish"
            )
        except KGPError:
            shot = await cdp.call("Page.captureScreenshot", format="png")
            out.with_suffix(".failed.png").write_bytes(base64.b64decode(shot["data"]))
            raise
        await asyncio.sleep(2)
        for command in before:
            await _run_in_editor(cdp, command, timeout)
        if before:
            await _run_in_editor(cdp, f":play {guide_url}", timeout, wait=False)
        else:
            await cdp.call(
                "Page.navigate", url=f"{browser_url}?cmd=play&arg={quote(guide_url, safe='')}"
            )
        try:
            await cdp.wait_js(
                "document.body.innerText.includes('kg-platform: your graph')",
                timeout,
                "the guide to render",
            )
        except KGPError:
            shot = await cdp.call("Page.captureScreenshot", format="png")
            out.with_suffix(".failed.png").write_bytes(base64.b64decode(shot["data"]))
            raise
        await asyncio.sleep(3)  # fonts and the carousel's layout
        shot = await cdp.call("Page.captureScreenshot", format="png")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(shot["data"]))


def take_screenshot(
    http_base: str,
    bolt_uri: str,
    password: str,
    out: Path,
    *,
    width: int = 1400,
    height: int = 900,
    timeout: float = 40.0,
    before: tuple[str, ...] = (),
) -> Path:
    """Save a PNG of Browser at ``http_base`` with the guide open; return ``out``.

    ``before``: Browser commands or queries run first (e.g. the ``:style`` line and a saved
    query), so the picture shows their result frames under the guide.
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise ConfigError("Chromium is not installed", hint="apt-get install -y chromium")
    try:
        import websockets  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            "the screenshot needs the websockets package", hint="pip install websockets"
        ) from exc
    from kg_platform.browser.guide import browser_urls

    urls = browser_urls(http_base)
    profile = Path(tempfile.mkdtemp(prefix="kgp-chromium-"))
    proc = subprocess.Popen(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            f"--window-size={width},{height}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = profile / "DevToolsActivePort"
        end = time.monotonic() + 30
        while not port_file.exists() and time.monotonic() < end:
            time.sleep(0.2)
        if not port_file.exists():
            raise KGPError("Chromium did not open its DevTools port within 30 s")
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            pages = [p for p in json.load(resp) if p.get("type") == "page"]
        asyncio.run(
            _shoot(
                pages[0]["webSocketDebuggerUrl"],
                urls["browser"],
                bolt_uri,
                password,
                urls["guide"],
                out,
                width,
                height,
                timeout,
                before,
            )
        )
    finally:
        stop_child(proc, timeout=10)
        shutil.rmtree(profile, ignore_errors=True)
    return out
