"""The HTML report's style sheet (inline in the page: nothing is fetched).

Three things here are behaviour, not looks:

- "failures only": the checkbox `#failures-only` is a sibling before the
  matrix and the prompts, so `:checked ~` hides every matrix row and prompt
  section of class `ok` with CSS alone (the page has no script);
- nothing is cut: ids wrap (`overflow-wrap: anywhere`), the matrix's rule ids
  are written upright in full, and the chart (whose labels wrap in the SVG,
  `_html_chart.py`) scales down to the page, so the page never scrolls sideways;
- a hundred prompts stay one screen: the matrix and the chart scroll in a box
  of their own (`.box`), their header row staying in view (`position: sticky`).
"""

from __future__ import annotations

__all__ = ["STYLE"]

STYLE = """
:root { --error: #b3261e; --warn: #8a5a00; --ok: #1e6b34; --muted: #5f6368; --line: #dadce0; }
body {
  font: 15px/1.5 system-ui, sans-serif; color: #1f1f1f;
  margin: 0 auto; max-width: 60rem; padding: 1rem 1.5rem 3rem;
}
h1 { font-size: 1.4rem; margin: 0.5rem 0 0.25rem; }
h2 { font-size: 1.1rem; margin: 0 0 0.5rem; display: inline; }
summary { cursor: pointer; }
.muted, .meta dt { color: var(--muted); }
.bar { display: flex; flex-wrap: wrap; gap: 0.5rem; list-style: none; padding: 0; }
.bar li { border: 1px solid var(--line); border-radius: 0.4rem; padding: 0.3rem 0.7rem; }
.bar strong { font-size: 1.1rem; margin-right: 0.3rem; }
.stopped { border-left: 4px solid var(--error); padding: 0.3rem 0.7rem; background: #fce8e6; }
input.switch {
  width: 1.1rem; height: 1.1rem; margin: 0.6rem 0.4rem 0.6rem 0; vertical-align: -0.2rem;
}
label.switch { font-weight: 600; cursor: pointer; }
#failures-only:checked ~ main .prompt.ok,
#failures-only:checked ~ .matrix tr.ok { display: none; }
.none-failed { display: none; }
#failures-only:checked ~ main .none-failed { display: block; }
.matrix h2, .timings h2 { display: block; margin-top: 1rem; }
.box { max-width: 100%; max-height: min(36rem, 75vh); overflow: auto; }
.matrix .box { width: fit-content; }
.matrix table { border-collapse: separate; border-spacing: 0; font-size: 0.85rem; }
.matrix th, .matrix td {
  border: solid var(--line); border-width: 0 1px 1px 0; padding: 0.1rem 0.35rem;
}
.matrix thead th {
  position: sticky; top: 0; z-index: 1; background: #fff; vertical-align: bottom;
  font-weight: 600; border-top-width: 1px;
}
.matrix th.rule { padding: 0.35rem 0.1rem; }
.matrix .prompt-col { border-left-width: 1px; }
.matrix th.rule span { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; }
.matrix tbody th {
  text-align: left; font-weight: 400; max-width: 20rem; overflow-wrap: anywhere;
  border-left-width: 4px;
}
.matrix tr.fail th { border-left-color: var(--error); }
.matrix tr.warn th { border-left-color: var(--warn); }
.matrix tr.ok th { border-left-color: var(--ok); }
.matrix td.m { text-align: center; min-width: 1.1rem; }
.matrix td.pass { color: var(--ok); }
.matrix td.warn { background: #fef7e0; color: var(--warn); font-weight: 700; }
.matrix td.fail { background: var(--error); color: #fff; font-weight: 700; }
.matrix td.skip, .matrix td.not-run { color: #80868b; }
.prompt {
  border: 1px solid var(--line); border-left-width: 6px; border-radius: 0.4rem;
  padding: 0.8rem 1rem; margin: 1rem 0;
}
.prompt.fail { border-left-color: var(--error); }
.prompt.warn { border-left-color: var(--warn); }
.prompt.ok { border-left-color: var(--ok); }
.prompt.not-run { border-left-color: #bdc1c6; opacity: 0.75; }
.verdict {
  font-size: 0.8rem; font-weight: 600; color: #fff; background: #80868b;
  padding: 0.05rem 0.45rem; border-radius: 0.3rem;
}
.fail .verdict { background: var(--error); }
.warn .verdict { background: var(--warn); }
.ok .verdict { background: var(--ok); }
.prompt h2 { overflow-wrap: anywhere; }
.prompt .top { float: right; font-size: 0.8rem; color: var(--muted); }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 0.8rem; }
.meta dd {
  margin: 0; font: 0.85rem ui-monospace, monospace; overflow-wrap: anywhere; min-width: 0;
}
.turn { background: #f8f9fa; border-radius: 0.4rem; padding: 0.5rem 0.8rem; }
.turn, .findings, .prompt > p { overflow-wrap: anywhere; }
.silvia-chip { font-size: 0.75em; padding: 0 0.1em; }
.silvia-sources { font-size: 0.9rem; }
.silvia-quote { color: var(--muted); }
.findings li { margin: 0.4rem 0; }
.findings .error strong { color: var(--error); }
.findings .warning strong { color: var(--warn); }
pre {
  background: #f1f3f4; padding: 0.4rem 0.6rem; border-radius: 0.3rem;
  font-size: 0.8rem; white-space: pre-wrap; overflow-wrap: anywhere;
}
.chart { display: block; max-width: 100%; height: auto; }
.chart a:hover text { text-decoration: underline; }
.chart text { font: 11px system-ui, sans-serif; fill: #3c4043; }
.chart .first { fill: #8ab4f8; }
.chart .total { fill: #1a73e8; }
"""
