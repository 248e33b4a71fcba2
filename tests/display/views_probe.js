// What tests/display/test_browser.py's page reports: per section, what the browser built.
(() => ({
  title: document.title,
  pwned: window.__silvia_pwned ?? null,
  top: [...document.body.children].map((e) => e.id),
  sections: [...document.querySelectorAll('section[data-case]')].map((s) => ({
    id: s.id,
    tags: [...new Set([...s.querySelectorAll('*')].map((e) => e.localName))],
    attributes: [...new Set([...s.querySelectorAll('*')].flatMap((e) => e.getAttributeNames()))],
    links: [...s.querySelectorAll('a, area')].map((a) => ({
      raw: a.getAttribute('href'), protocol: a.protocol, origin: a.origin, path: a.pathname,
      text: a.textContent,
    })),
    text: s.textContent,
  })),
}))()
