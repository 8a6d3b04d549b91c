"""Drive Debian's headless Chromium from a test: open a page, evaluate JavaScript in it, read what it rendered.

No driver to install: Chromium speaks the DevTools protocol over a pipe (``--remote-debugging-pipe``: it reads
NUL-terminated JSON messages on fd 3 and writes them on fd 4). ``scripts/test-setup.sh`` installs the ``chromium``
package; the flags are the ones this machine needs (no sandbox as root, no background networking, a fresh profile).

    with Browser() as browser:
        page = browser.open("file:///tmp/view.html")
        page.evaluate("document.title")
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--remote-debugging-pipe"]


def chromium_bin() -> str:
    """The browser, or a failed test saying how to get it (browser tests never skip: CI must prove the page)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        import pytest

        pytest.fail("chromium is not installed: `apt-get install chromium` (scripts/test-setup.sh does it)",
                    pytrace=False)
    return found


class BrowserError(RuntimeError):
    pass


class Page:
    def __init__(self, browser: Browser, session: str):
        self.browser, self.session = browser, session

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.browser.call(method, params, session=self.session)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression!r}")
            time.sleep(0.05)

    def screenshot(self, path: str) -> None:
        import base64

        data = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))


class Browser:
    def __init__(self, timeout: float = 30.0):
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._next = 0
        self._buffer = b""

    def __enter__(self) -> Browser:
        self.profile = tempfile.mkdtemp(prefix="rose-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium expects the pipe on fds 3 (its input) and 4 (its output); copied out of the way first, since
        # the pipes themselves may sit on 3 or 4
        def child_fds() -> None:
            high_r, high_w = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)
        self.proc = subprocess.Popen([chromium_bin(), *FLAGS, f"--user-data-dir={self.profile}",
                                      "--window-size=1400,1800", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=child_fds, pass_fds=(3, 4),
                                     start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - it is going away either way
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            import signal

            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 16)
                if not chunk:
                    raise BrowserError("chromium closed its pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def open(self, url: str) -> Page:
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            page.call(domain)
        page.call("Page.navigate", {"url": url})
        page.wait_for("document.readyState === 'complete'")
        return page

    def problems(self) -> list[str]:
        """Exceptions thrown and console errors or violations reported so far (CSP blocks included)."""
        out = []
        for ev in self.events:
            method, params = ev.get("method"), ev.get("params", {})
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                out.append(params["entry"].get("text", ""))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                out.append(json.dumps(params.get("args"))[:500])
        return out
