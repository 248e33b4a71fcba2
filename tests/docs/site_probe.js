// What tests/docs/site.py runs first in every page of the site: its errors, links, ids and
// search results, written into the DOM once it has loaded (and the search has answered).
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
