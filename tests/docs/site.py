"""The documentation site for the browser test: built once, served from 127.0.0.1.

::

    site = build_site(tmp_dir)              # `mkdocs build --strict`, as CI runs it
    with SiteServer(site) as server:        # http://127.0.0.1:<port>/
        page = load(chromium, server.origin + "/streaming/?q=word")
        page.report    # what the probe saw: errors, links, ids, search results
        server.missing # every path it answered 404

The site is served over http, not file://, because its search runs in a web
worker, which Chromium does not start for a file:// page. Every HTML page is served
with `PROBE` as the first script of its `<head>`, so it sees everything the page
does: it records console errors, uncaught errors, unhandled rejections and every
element that failed to load; once the page has loaded (and, given `?q=WORD`, once
the search has answered) it writes what it found into the DOM, where `load` reads it.

Chromium runs in virtual time (tests/browser.py), which does not wait for a
worker: so the probe waits for the search by fetching `/__tick`, which the server
answers after a few real milliseconds. A pending fetch holds virtual time, so the
worker gets real time to build its index. Every host but 127.0.0.1 resolves to
nothing, so a page that asked for anything remote would show an error.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from ..browser import LAUNCH_TIMEOUT, OFFLINE, REPORT_ID, Chromium, Page, read_report

ROOT = Path(__file__).resolve().parents[2]
TICK = "/__tick"
TICK_SECONDS = 0.02  # real time per tick: how finely the probe polls the search
MAX_TICKS = 5000  # a guard against a search that never answers, not a bound on speed

PROBE = (
    """
(() => {
  const errors = [];
  const original = console.error.bind(console);
  console.error = (...args) => { errors.push(args.map(String).join(" ")); original(...args); };
  window.addEventListener("error", (event) => {
    const t = event.target;
    const what = t && t !== window ? t.src || t.href || t.tagName : "";
    errors.push(event.message || "could not load " + what);
  }, true);
  window.addEventListener("unhandledrejection", (event) => {
    errors.push("unhandled rejection: " + event.reason);
  });
  const query = new URLSearchParams(location.search).get("q");
  const results = () =>
    [...document.querySelectorAll(".md-search-result__item a")].map((a) => a.href);
  const meta = () =>
    (document.querySelector(".md-search-result__meta") || {}).textContent || "";
  async function report() {
    let ticks = 0;
    while (query && !results().length && !/no matching/i.test(meta()) && ticks < MAX_TICKS) {
      await fetch("TICK");
      ticks += 1;
    }
    const out = document.createElement("pre");
    out.id = "REPORT_ID";
    out.textContent = JSON.stringify({
      errors,
      ticks,
      results: results(),
      meta: meta().trim(),
      links: [...document.querySelectorAll("a[href]")].map((a) => a.href),
      ids: [...document.querySelectorAll("[id]")].map((e) => e.id),
      title: document.title,
    });
    document.documentElement.appendChild(out);
  }
  window.addEventListener("load", () => setTimeout(report, 200));
})();
""".replace("MAX_TICKS", str(MAX_TICKS))
    .replace("TICK", TICK)
    .replace("REPORT_ID", REPORT_ID)
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
                page = pages.get(path) or served.html(path)
                if page is None:
                    super().do_GET()
                    return
                body = probed(page)
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

    def html(self, path: str) -> bytes | None:
        """The bytes of the HTML page at URL path `path`, or None when it is not one."""
        file = self.file(path)
        return file.read_bytes() if file is not None and file.suffix == ".html" else None

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

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def probed(page: bytes) -> bytes:
    """`page` with the probe as the first thing in its `<head>`."""
    script = b"<script>" + PROBE.encode("utf-8") + b"</script>"
    head = re.search(rb"<head[^>]*>", page)
    assert head is not None, "a page without <head>"
    return page[: head.end()] + script + page[head.end() :]


@dataclass(frozen=True)
class LoadedPage:
    """What the probe reported from one page."""

    url: str
    report: dict[str, Any]


def load(chromium: Chromium, url: str) -> LoadedPage:
    """Load `url` in a fresh headless Chromium, offline but for 127.0.0.1; the probe's report."""
    dom = chromium.run(url, OFFLINE, "--dump-dom").decode("utf-8", "replace")
    return LoadedPage(url, read_report(Page(dom, ())))
