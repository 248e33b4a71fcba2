"""The documentation site for the browser test: built once, served from 127.0.0.1.

::

    site = build_site(tmp_dir)              # `mkdocs build --strict`, as CI runs it
    with SiteServer(site) as server:        # http://127.0.0.1:<port>/
        pages = load(chromium, server, ["/", "/streaming/?q=word"])
        pages["/streaming/?q=word"]  # what the probe saw: errors, links, ids, results
        server.missing                      # every path it answered 404

Served over http (the search's web worker does not start on file://). Each HTML page gets
`PROBE` first in its `<head>`, which reports errors and failed loads (and the search's
results, given `?q=WORD`) into the DOM; `load` opens the pages in turn in frames of one
page, in one launch. Virtual time does not wait for a worker: while the search runs, the
probe polls `/__tick`, which the server answers after a few real milliseconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..browser import LAUNCH_TIMEOUT, OFFLINE, REPORT_ID, Chromium, Page, read_report

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
TICK = "/__tick"
TICK_SECONDS = 0.02  # real time per tick: how finely the probe polls the search
MAX_TICKS = 5000  # a guard against a search that never answers, not a bound on speed
PAGES = "/__pages"
SECONDS_A_PAGE = 60  # a guard against a hung browser, as LAUNCH_TIMEOUT is for one page

# The probe every HTML page runs first (`probed`), and the page that opens the pages in turn
# and collects their reports (`load`), beside this file.
PROBE = (
    (HERE / "site_probe.js")
    .read_text(encoding="utf-8")
    .replace("MAX_TICKS", str(MAX_TICKS))
    .replace("TICK", TICK)
    .replace("REPORT_ID", REPORT_ID)
)
DRIVER = (
    (HERE / "site_pages.html")
    .read_text(encoding="utf-8")
    .replace("REPORT_ID", REPORT_ID)
    .replace("MAX_WAITS", str(MAX_TICKS))
)


def build_site(site_dir: Path) -> Path:
    """Build the site into `site_dir` with `mkdocs build --strict`; AssertionError if it fails."""
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's banner, not ours
    # Not `--quiet`: it hides the warnings that `--strict` counts, and the build passes.
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    config = ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site_dir)]
    done = subprocess.run(
        [*command, *config],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=LAUNCH_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return site_dir


class SiteServer:
    """The built site on 127.0.0.1, its HTML pages probed; remembers what it could not find."""

    def __init__(self, site: Path, extra: dict[str, bytes] | None = None) -> None:
        self.site = site
        self.requests: list[str] = []
        self.missing: list[str] = []
        self.pages = b""  # what `load` serves at PAGES
        served = self
        pages = dict(extra or {})

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, directory=str(site), **kwargs)

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                served.requests.append(self.path)
                if path == TICK:
                    time.sleep(TICK_SECONDS)  # real time for the search worker to run
                    self.send_response(204)
                    self.end_headers()
                    return
                file = served.file(path)
                html = file.read_bytes() if file is not None and file.suffix == ".html" else None
                page = pages.get(path) or html
                if page is None and path != PAGES:
                    super().do_GET()
                    return
                body = served.pages if page is None else probed(page)
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.send_header("cache-control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def send_error(self, code: int, message: str | None = None, *args: Any) -> None:
                if code == 404:
                    served.missing.append(self.path)
                super().send_error(code, message, *args)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads `requests` and `missing`

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def file(self, path: str) -> Path | None:
        """The file the URL path `path` names in the site (a directory: its index.html)."""
        target = (self.site / path.lstrip("/")).resolve()
        if not target.is_relative_to(self.site.resolve()):
            return None
        if target.is_dir():
            target = target / "index.html"
        return target if target.is_file() else None

    def __enter__(self) -> SiteServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def probed(page: bytes) -> bytes:
    """`page` with the probe as the first thing in its `<head>`."""
    script = b"<script>" + PROBE.encode("utf-8") + b"</script>"
    head = re.search(rb"<head[^>]*>", page)
    assert head is not None, "a page without <head>"
    return page[: head.end()] + script + page[head.end() :]


def load(chromium: Chromium, server: SiteServer, paths: list[str]) -> dict[str, Any]:
    """Each of `paths` (with a query, if any) loaded from `server` in one headless Chromium,
    offline but for 127.0.0.1: the probe's report of each, by path."""
    server.pages = DRIVER.replace("URLS", json.dumps(paths)).encode("utf-8")
    budget = f"--virtual-time-budget={len(paths) * 60_000}"  # the last flag of a name wins
    timeout = len(paths) * SECONDS_A_PAGE
    dom = chromium.run(server.origin + PAGES, OFFLINE, budget, "--dump-dom", timeout=timeout)
    reports = read_report(Page(dom.decode("utf-8", "replace"), ()))
    missing = [path for path in paths if path not in reports]
    assert not missing, f"no report from {missing}"
    return {path: reports[path] for path in paths}
