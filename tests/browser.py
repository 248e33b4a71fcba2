"""Headless Chromium for tests: load a page from 127.0.0.1 and read it after its scripts ran.

`chromium.load(html)` (the fixture, through a conftest) gives a `Page`: its `dom` once
settled, its `requests` (paths asked for, in order). Pages are served over http from
127.0.0.1 so relative links resolve; `--dump-dom` with a virtual-time budget lets timers and
events fire first. A page reports by writing into its DOM (`report_script`, `read_report`);
`OFFLINE` fails every host name at once. Tests using it carry the `browser` marker.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Nothing leaves the machine: no sync, updates, field trials or QUIC; a profile of its own.
FLAGS = (
    # No sandbox: CI runs as root.
    *("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"),
    *("--disable-quic", "--no-first-run", "--no-default-browser-check", "--disable-sync"),
    *("--disable-background-networking", "--disable-component-update", "--disable-extensions"),
    "--virtual-time-budget=10000",  # virtual milliseconds for the page to settle
)
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
LAUNCH_TIMEOUT = 180  # seconds: a guard against a hung browser, not a bound on speed
REPORT_ID = "silvia-browser-report"


@dataclass(frozen=True)
class Page:
    """A page as Chromium left it: its serialised DOM and the paths it requested."""

    dom: str
    requests: tuple[str, ...]


class _PageServer:
    """Serves pages from memory on 127.0.0.1 and remembers every request path."""

    def __init__(self) -> None:
        self.pages: dict[str, bytes] = {}
        self.requests: list[str] = []
        pages, requests = self.pages, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                body = pages.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("cache-control", "no-store")
                self.end_headers()
                self.wfile.write(body or b"")

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads `requests`

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


class Chromium:
    """One headless Chromium binary, one profile, one page server; `load` runs a page."""

    def __init__(self, path: str, profile: Path, server: _PageServer) -> None:
        self.path = path
        self.profile = profile
        self._server = server
        self._count = 0

    @property
    def origin(self) -> str:
        """The origin pages are served from, e.g. `http://127.0.0.1:40123`."""
        return self._server.origin

    def publish(self, path: str, page: str) -> str:
        """Serve `page` at `path` (e.g. `/export.html`) from now on; returns `path`."""
        self._server.pages[path] = page.encode("utf-8")
        return path

    def run(self, url: str, *flags: str, timeout: float = LAUNCH_TIMEOUT) -> bytes:
        """Load `url` in a fresh Chromium with `flags`; its stdout, or AssertionError."""
        command = [self.path, *FLAGS, *flags, f"--user-data-dir={self.profile}", url]
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        stderr = done.stderr.decode("utf-8", "replace")[-2000:]
        assert done.returncode == 0, f"Chromium exited with {done.returncode}: {stderr}"
        return done.stdout

    def load(
        self, page: str, *, window: tuple[int, int] | None = None, flags: tuple[str, ...] = ()
    ) -> Page:
        """Serve `page` (an HTML document), load it in a fresh Chromium, return what it left."""
        self._count += 1
        path = self.publish(f"/page-{self._count}.html", page)
        self._server.requests.clear()
        size = () if window is None else (f"--window-size={window[0]},{window[1]}",)
        dom = self.run(self.origin + path, *flags, *size, "--dump-dom").decode("utf-8")
        assert dom.strip(), "Chromium wrote no DOM"
        return Page(dom, tuple(self._server.requests))


def report_script(expression: str) -> str:
    """A `<script>` (for the `<head>`) that, once the page has settled, writes the JavaScript
    `expression`'s value as JSON, for `read_report`."""
    return (
        "<script>window.addEventListener('load', () => setTimeout(() => {"
        f"const out = document.createElement('pre'); out.id = '{REPORT_ID}';"
        f"out.textContent = JSON.stringify({expression});"
        "document.documentElement.appendChild(out);"
        "}, 1000));</script>"
    )


def read_report(page: Page) -> Any:
    """The value `report_script` wrote into `page`; AssertionError when there is none."""
    found = re.findall(f'<pre id="{REPORT_ID}">(.*?)</pre>', page.dom, re.DOTALL)
    assert len(found) == 1, f"the page wrote {len(found)} reports (its body may have been cut)"
    return json.loads(html.unescape(found[0]))


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """Headless Chromium: skipped when it is missing, a failure when it is missing under CI."""
    path = next(filter(None, map(shutil.which, CANDIDATES)), None)  # Chromium or Chrome
    if path is None:
        message = "Chromium is not installed (apt-get install chromium): browser tests not run"
        if os.environ.get("CI"):
            pytest.fail(f"{message}, and CI is set", pytrace=False)
        pytest.skip(message)
    server = _PageServer()
    try:
        with tempfile.TemporaryDirectory(
            prefix="silvia-chromium-", ignore_cleanup_errors=True
        ) as profile:
            yield Chromium(path, Path(profile), server)
    finally:
        server.close()
