// What tests/display/test_themes.py measures on a page of views (one expression).
(() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const parse = (c) => {
    let m = c.match(/^rgba?\(([^)]*)\)/);
    let scale = 1;
    if (!m) { m = c.match(/^color\(srgb ([^)]*)\)/); scale = 255; }
    if (!m) return null;
    const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return [p[0] * scale, p[1] * scale, p[2] * scale, p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const background = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let c = [255, 255, 255];
    for (const e of chain) {
      const b = parse(getComputedStyle(e).backgroundColor);
      if (b && b[3] > 0) c = over(b, c);
    }
    return c;
  };
  const lum = (c) => {
    const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const problems = [];
  let texts = 0, minimum = 99, views = 0;
  const shades = [];
  for (const frame of document.querySelectorAll('[data-frame]')) {
    const box = frame.getBoundingClientRect();
    for (const view of frame.querySelectorAll(':scope > .silvia')) {
      views += 1;
      shades.push(lum(background(view)));
      const where = frame.dataset.frame;
      for (const el of view.querySelectorAll('*')) {
        if (el.localName === 'style') continue;
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5) {
          problems.push({where, what: 'overflows', el: el.localName + '.' + el.className, right: r.right, frame: box.right});
        }
        const own = [...el.childNodes].filter((n) => n.nodeType === 3 && n.textContent.trim());
        if (!own.length) continue;
        texts += 1;
        const style = getComputedStyle(el);
        const fg = parse(style.color);
        const bg = background(el);
        const contrast = ratio(over(fg, bg), bg);
        minimum = Math.min(minimum, contrast);
        if (contrast < %(min)s) {
          problems.push({where, what: 'contrast', el: el.localName + '.' + el.className, text: el.textContent.slice(0, 40), contrast, color: style.color});
        }
        for (const node of own) {
          const range = document.createRange();
          range.selectNodeContents(node);
          for (const t of range.getClientRects()) {
            for (let a = el; a && a !== frame; a = a.parentElement) {
              const s = getComputedStyle(a);
              if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
              const c = a.getBoundingClientRect();
              if (t.left < c.left - 0.5 || t.right > c.right + 0.5 || t.top < c.top - 0.5 || t.bottom > c.bottom + 0.5) {
                problems.push({where, what: 'clipped', el: el.localName + '.' + el.className, text: node.textContent.slice(0, 40)});
              }
            }
            if (t.right > box.right + 0.5 || t.left < box.left - 0.5) {
              problems.push({where, what: 'text outside its column', text: node.textContent.slice(0, 40)});
            }
          }
        }
      }
    }
  }
  return {problems: problems.slice(0, 40), count: problems.length, texts, minimum, views, shades,
          scroll: document.documentElement.scrollWidth, inner: innerWidth,
          pwned: window.__pwned ?? null};
})()
