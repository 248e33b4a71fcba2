// What tests/display/test_themes.py measures in an nbconvert export, in the frame holding it.
(() => {
  const views = [...document.querySelectorAll('.silvia')];
  const shown = views.map((v) => ({
    view: v.classList[1],
    height: v.getBoundingClientRect().height,
    headings: [...v.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]')]
      .filter((h) => h.textContent.trim() === 'Sources').length,
    open: [...v.querySelectorAll('details')].filter((d) => d.open).length,
  }));
  document.querySelectorAll('.silvia details').forEach((d) => { d.open = true; });
  const problems = [];
  let words = 0;
  for (const dt of document.querySelectorAll('.silvia dt')) {
    const node = dt.firstChild;
    let at = 0;
    for (const word of node.textContent.split(' ')) {
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + word.length);
      at += word.length + 1;
      words += 1;
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (lines.size > 1) problems.push(`the key ${word} wraps inside a word`);
    }
  }
  const edge = document.documentElement.clientWidth;
  for (const view of views) {
    const box = view.getBoundingClientRect();
    if (box.left < -0.5 || box.right > edge + 0.5) problems.push(`${view.className} leaves the page`);
    for (const el of view.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5)) {
        problems.push(`${el.localName}.${el.className} overflows its view by ${r.right - box.right}px`);
      }
    }
    for (let a = view; a; a = a.parentElement) {
      if (a.scrollWidth > a.clientWidth + 1 && getComputedStyle(a).overflowX !== 'visible') {
        problems.push(`${a.localName}.${a.className} scrolls sideways`);
      }
    }
  }
  if (document.documentElement.scrollWidth > edge) problems.push('the page scrolls sideways');
  return {width: innerWidth, views: shown, words, problems};
})()
