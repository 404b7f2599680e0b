// The web application's only assets, served by compplan itself (no CDN, no web fonts:
// the system font stack). Kept in the code so that `dist/` needs nothing copied beside it.
import { createHash } from 'node:crypto';
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';

/**
 * The colours and shapes every compplan page shares (the web application, GET /, and the
 * API reference at /docs, whose Swagger UI is dressed in them: plugins/docs-page.ts).
 */
export const THEME_VARIABLES = `:root {
  --ink: #1b2330;
  --ink-soft: #4a5568;
  --muted: #6b7280;
  --line: #dde3ea;
  --bg: #f5f7fa;
  --panel: #ffffff;
  --brand: #2450b8;
  --brand-dark: #1b3d8f;
  --brand-soft: #e8eefc;
  --danger: #b42318;
  --danger-soft: #fdecea;
  --success: #1e7a46;
  --success-soft: #e7f6ed;
  --warn-soft: #fff6e0;
  --warn-line: #f0c36d;
  --focus: #f59e0b;
  --radius: 8px;
  color-scheme: light;
}`;
export const FONT_STACK =
  'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", Arial, sans-serif';
export const MONO_STACK =
  'ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace';

/** The compplan mark and name (views.ts `brand()`), on every page that shows them. */
export const BRAND_CSS = `.brand { display: inline-flex; align-items: center; gap: 0.5rem; font-weight: 700; font-size: 1.05rem; color: var(--ink); }
.brand-mark {
  display: inline-grid; place-items: center; width: 1.8rem; height: 1.8rem; border-radius: 6px;
  background: var(--brand); color: #fff; font-size: 0.8rem; letter-spacing: 0.02em;
}`;

const CSS = `
${THEME_VARIABLES}
*, *::before, *::after { box-sizing: border-box; }
html { font-size: 100%; }
/* A column as tall as the window: the settings area fills what the top bar leaves, so that a
   short page never scrolls (a fixed guess of the bar's height was 7 px short). */
body {
  margin: 0;
  min-height: 100vh;
  display: flex;
  flex-direction: column;
  font-family: ${FONT_STACK};
  font-size: 0.95rem;
  line-height: 1.5;
  color: var(--ink);
  background: var(--bg);
}
code, .secret {
  font-family: ${MONO_STACK};
  font-size: 0.88em;
}
a { color: var(--brand); }
a:hover { color: var(--brand-dark); }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 0.75rem; }
h2 { font-size: 1.1rem; margin: 0 0 0.75rem; }
p { margin: 0 0 0.75rem; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 4px; }
main:focus { outline: none; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; margin: -1px; padding: 0;
  overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}
.skip-link { position: absolute; left: 0.5rem; top: -3rem; z-index: 10; background: var(--panel); padding: 0.5rem 0.75rem; border-radius: var(--radius); }
.skip-link:focus { top: 0.5rem; }
.muted { color: var(--muted); }
.hint { color: var(--muted); font-size: 0.85rem; margin: 0.3rem 0 0; }
.lead { color: var(--ink-soft); max-width: 46rem; }

/* Top bar and settings layout */
.topbar {
  display: flex; align-items: center; gap: 1rem;
  padding: 0.6rem 1.5rem; background: var(--panel); border-bottom: 1px solid var(--line);
}
${BRAND_CSS}
.org { color: var(--ink-soft); padding-left: 1rem; border-left: 1px solid var(--line); }
.account { margin-left: auto; display: flex; align-items: center; gap: 0.75rem; }
.account form { margin: 0; }
.who { color: var(--ink-soft); font-size: 0.88rem; }
.role {
  display: inline-block; margin-left: 0.35rem; padding: 0 0.45rem; border-radius: 999px;
  background: var(--brand-soft); color: var(--brand-dark); font-size: 0.75rem; font-weight: 600;
}
.settings { flex: 1; display: grid; grid-template-columns: 15rem minmax(0, 1fr); }
.side { padding: 1.5rem 1rem; border-right: 1px solid var(--line); background: #fbfcfd; }
.side-title { font-size: 0.75rem; font-weight: 700; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 0.5rem 0.75rem; }
.side ul { list-style: none; margin: 0; padding: 0; }
.side a {
  display: block; padding: 0.45rem 0.75rem; border-radius: 6px; color: var(--ink-soft); text-decoration: none;
}
.side a:hover { background: var(--brand-soft); color: var(--brand-dark); }
.side a[aria-current="page"] { background: var(--brand-soft); color: var(--brand-dark); font-weight: 600; }
main { padding: 1.75rem 2rem 3rem; max-width: 64rem; min-width: 0; }
/* A phone: one column no wider than the screen (minmax(0, …): a wide table or command
   must not widen the page), the navigation above the content. */
@media (max-width: 48rem) {
  .settings { grid-template-columns: minmax(0, 1fr); align-content: start; }
  .side { border-right: 0; border-bottom: 1px solid var(--line); padding: 0.75rem 1rem; }
  .side-title { display: none; }
  .side ul { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; }
  .topbar { flex-wrap: wrap; gap: 0.5rem 1rem; padding: 0.6rem 1rem; }
  .account { margin-left: 0; width: 100%; justify-content: space-between; }
  .who { min-width: 0; overflow-wrap: anywhere; }
  main { padding: 1.25rem 1rem 2rem; }
  .panel { padding: 1rem; }
}

/* Panels, notices, badges */
.panel {
  background: var(--panel); border: 1px solid var(--line); border-radius: var(--radius);
  padding: 1.25rem 1.5rem; margin: 0 0 1.25rem;
}
.panel-new-key { border-color: var(--warn-line); background: #fffdf7; }
.panel-danger { border-color: #f3b8b2; }
.notice { padding: 0.7rem 0.9rem; border-radius: var(--radius); margin: 0 0 1rem; border: 1px solid transparent; }
.notice-error { background: var(--danger-soft); border-color: #f3b8b2; color: #7a1a12; }
.notice-success { background: var(--success-soft); border-color: #a8dcbc; color: #135232; }
.notice-info { background: var(--brand-soft); border-color: #c5d4f6; color: #1f3a7a; }
.warning { background: var(--warn-soft); border: 1px solid var(--warn-line); border-radius: var(--radius); padding: 0.6rem 0.8rem; }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.78rem; font-weight: 600; }
.badge-active { background: var(--success-soft); color: var(--success); }
.badge-revoked { background: #eef0f3; color: #505a66; }

/* Forms and buttons */
fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
fieldset:disabled label, fieldset:disabled .hint { color: var(--muted); }
.field { margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin: 0 0 0.3rem; }
input[type="text"], input[type="email"], input[type="password"] {
  width: 100%; max-width: 28rem; padding: 0.55rem 0.7rem; font: inherit; color: var(--ink);
  background: #fff; border: 1px solid #b9c3cf; border-radius: 6px;
}
input:disabled { background: #f0f2f5; color: var(--muted); }
input:focus-visible { border-color: var(--brand); }
.button {
  display: inline-flex; align-items: center; justify-content: center; gap: 0.4rem;
  padding: 0.5rem 1rem; font: inherit; font-weight: 600; line-height: 1.3; text-decoration: none;
  border-radius: 6px; border: 1px solid transparent; cursor: pointer; white-space: nowrap;
}
.button-primary { background: var(--brand); color: #fff; }
.button-primary:hover { background: var(--brand-dark); color: #fff; }
.button-danger { background: var(--danger); color: #fff; }
.button-danger:hover { background: #8f1c13; color: #fff; }
.button-quiet { background: transparent; color: var(--ink-soft); border-color: #c6ced8; }
.button-quiet:hover { background: #eef1f5; color: var(--ink); }
.button-danger-quiet { background: transparent; color: var(--danger); border-color: #efb4ae; }
.button-danger-quiet:hover { background: var(--danger-soft); color: #8f1c13; }
.button-small { padding: 0.25rem 0.65rem; font-size: 0.85rem; }
.button-wide { width: 100%; }
.button:disabled, fieldset:disabled .button { background: #c9d1db; color: #5b6572; border-color: transparent; cursor: not-allowed; }
.button-row { display: flex; gap: 0.75rem; align-items: center; }
.inline-form .field { max-width: 28rem; }
.switch-row { display: flex; gap: 0.75rem; align-items: flex-start; margin: 0 0 1rem; }
.switch-row input[type="checkbox"] { width: 1.25rem; height: 1.25rem; margin: 0.15rem 0 0; accent-color: var(--brand); flex: none; }
.secret-row { display: flex; gap: 0.5rem; align-items: stretch; max-width: 40rem; }
.secret-row .secret { flex: 1; min-width: 0; max-width: none; background: #fff; letter-spacing: 0.02em; }
.copy-status { min-height: 1.4em; margin: 0.35rem 0 0.5rem; color: var(--success); font-weight: 600; }
.code-block + .copy-status:empty { min-height: 0; margin: 0; }
/* A command to copy: whole, on one line, scrolling sideways inside its block if need be. */
.code-block { display: flex; gap: 0.5rem; align-items: flex-start; max-width: 100%; }
.code-block pre {
  flex: 1; min-width: 0; margin: 0; padding: 0.6rem 0.75rem; overflow-x: auto;
  background: #f0f3f8; border: 1px solid var(--line); border-radius: 6px;
  font-family: ${MONO_STACK};
  font-size: 0.84rem; line-height: 1.45; white-space: pre;
}
.code-block pre code { font-size: inherit; }
.code-block .button { flex: none; }
.link-list { list-style: none; margin: 0 0 1.25rem; padding: 0; }
.link-list li { padding: 0.55rem 0; border-bottom: 1px solid var(--line); }
.link-list li:last-child { border-bottom: 0; }
.link-list a { font-weight: 600; }
.link-list .hint { display: block; margin: 0.1rem 0 0; }

/* Tables and facts */
.table-wrap { overflow-x: auto; }
/* A list table on a phone (the keys, a webhook's deliveries): one block per row, each
   value beside its column's name, wrapping within the screen rather than scrolling. */
@media (max-width: 40rem) {
  .stacked thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  .stacked, .stacked tbody, .stacked tr, .stacked th, .stacked td { display: block; }
  .stacked tr { padding: 0.75rem 0; border-bottom: 1px solid var(--line); }
  .stacked tbody tr:last-child { border-bottom: 0; }
  .stacked th, .stacked td { padding: 0.15rem 0; border: 0; max-width: none; }
  .stacked tbody th { font-size: 1rem; overflow-wrap: anywhere; }
  .stacked td { display: flex; gap: 1rem; justify-content: space-between; align-items: baseline; text-align: right; overflow-wrap: anywhere; }
  .stacked td::before { content: attr(data-label); flex: none; color: var(--muted); font-size: 0.85rem; text-align: left; }
  .stacked td > * { min-width: 0; }
  .stacked td.actions { justify-content: flex-start; padding-top: 0.5rem; }
  .stacked td.actions::before { content: none; }
  .stacked td:empty { display: none; }
}
table { width: 100%; border-collapse: collapse; }
th, td { text-align: left; padding: 0.6rem 0.75rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
thead th { white-space: nowrap; font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted); font-weight: 700; }
tbody th { font-weight: 600; }
tbody tr:last-child th, tbody tr:last-child td { border-bottom: 0; }
td.actions { text-align: right; white-space: nowrap; }
th.number, td.number { text-align: right; font-variant-numeric: tabular-nums; }
fieldset.field { border: 0; padding: 0; margin: 0 0 1rem; min-width: 0; }
fieldset.field legend { font-weight: 600; margin-bottom: 0.35rem; padding: 0; }
.radio-row { display: flex; gap: 0.5rem; align-items: baseline; margin: 0.25rem 0; }
.radio-row label { font-weight: 400; }
.upload-form input[type="file"], .upload-form select { max-width: 100%; }
.upload-progress { margin-top: 1rem; }
.upload-progress progress { width: 100%; max-width: 28rem; }
/* A phone: the secret on a line of its own, whole; the Copy button under it. */
@media (max-width: 30rem) {
  .secret-row { flex-wrap: wrap; }
  .secret-row .secret { flex-basis: 100%; }
}
.role-form { display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; }
ol.problems { margin: 0; padding-left: 1.5rem; overflow-wrap: anywhere; }
ol.problems li { margin: 0.35rem 0; }
td time { white-space: nowrap; }
/* What belongs to a cell's value, on a line of its own under it (a key's prefix, expiry). */
.sub { display: block; margin-top: 0.15rem; font-size: 0.8rem; font-weight: 400; color: var(--muted); }
.sub time { white-space: nowrap; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1.25rem; margin: 0 0 1rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }

/* Sign-in and other single-card pages */
/* One column no wider than the window (minmax(0, …)): a long command scrolls in its block. */
.card-page {
  display: grid; grid-template-columns: minmax(0, 1fr); place-items: center;
  min-height: 100vh; padding: 1.5rem; max-width: none;
}
.card {
  width: 100%; max-width: 26rem; background: var(--panel); border: 1px solid var(--line);
  border-radius: 12px; padding: 2rem; box-shadow: 0 10px 30px rgba(27, 35, 48, 0.06);
}
.card-wide { max-width: 40rem; }
@media (max-width: 30rem) {
  .card-page { padding: 1rem; }
  .card { padding: 1.25rem; }
}
.card-brand { margin: 0 0 1.25rem; }
.card input[type="email"], .card input[type="password"] { max-width: none; }
.stack { margin: 0 0 1rem; }
`;

// The only script: the copy button, and the generate form's merit cycle choice. The copy
// button copies the secret and says so in a live region.
const JS = `'use strict';
// Ticking a merit cycle chooses "Only these"; choosing every merit cycle clears the ticks:
// the form never sends a choice its boxes contradict (the server refuses one anyway).
document.addEventListener('change', (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.checked) return;
  const list = box.closest('[data-chooses]');
  if (list) {
    const choice = document.getElementById(list.getAttribute('data-chooses'));
    if (choice) choice.checked = true;
  } else if (box.hasAttribute('data-clears')) {
    for (const ticked of document.querySelectorAll(box.getAttribute('data-clears') + ' input:checked')) ticked.checked = false;
  }
});
// A form that uploads or imports a file shows how far it has come while the page waits for
// the answer: the server tells, every half second, what the organisation's upload is doing.
document.addEventListener('submit', (event) => {
  const form = event.target;
  const url = form instanceof HTMLFormElement ? form.getAttribute('data-upload-progress') : null;
  const box = url && form.querySelector('.upload-progress');
  if (!box) return;
  const bar = box.querySelector('progress');
  const text = box.querySelector('[role="status"]');
  const words = { receiving: 'Uploading', checking: 'Checking', importing: 'Importing' };
  box.hidden = false;
  for (const button of form.querySelectorAll('button')) button.disabled = true;
  const poll = async () => {
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' } });
      const state = await response.json();
      if (state.running && state.total) {
        const percent = Math.min(100, Math.round((state.done / state.total) * 100));
        bar.value = percent;
        text.textContent = (words[state.phase] || 'Working') + ': ' + percent + ' %';
      } else if (state.running) {
        bar.removeAttribute('value');
        text.textContent = (words[state.phase] || 'Working') + '…';
      }
    } catch {}
    setTimeout(poll, 500);
  };
  text.textContent = 'Starting…';
  setTimeout(poll, 250);
});
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy-target]') : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute('data-copy-target'));
  const status = document.getElementById(button.getAttribute('data-copy-status') || 'copy-status');
  if (!field) return;
  // A key is an input (its value); a command is a block of text.
  const isInput = 'value' in field;
  let copied = false;
  try {
    await navigator.clipboard.writeText(isInput ? field.value : field.textContent);
    copied = true;
  } catch {
    field.focus();
    if (isInput) field.select();
    else getSelection().selectAllChildren(field);
    copied = document.execCommand && document.execCommand('copy');
  }
  if (status) status.textContent = copied ? 'Copied to the clipboard.' : 'Select the text and copy it with Ctrl+C or Cmd+C.';
  if (copied) button.textContent = button.getAttribute('data-copied-label') || 'Copied';
});
`;

export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2450b8"/><text x="16" y="21" font-family="Arial, sans-serif" font-size="14" font-weight="700" fill="#fff" text-anchor="middle">cp</text></svg>`;

const RESTRICTION_STYLES = `
.group-label { font-weight: 600; margin: 0 0 0.3rem; }
fieldset:disabled .group-label, fieldset:disabled .check { color: var(--muted); }
.check { display: flex; gap: 0.5rem; align-items: center; font-weight: 400; margin: 0 0 0.3rem; }
.check-list { margin: 0.2rem 0 0 1.6rem; max-height: 12rem; overflow: auto; }
.sub-label { font-weight: 400; margin-top: 0.5rem; }
select, input[type="date"] { padding: 0.45rem 0.6rem; font: inherit; border: 1px solid #b9c3cf; border-radius: 6px; background: #fff; max-width: 100%; }
/* The key table fits a 1280 px window: narrower gaps, long names and addresses wrap (a
   table too wide still scrolls within its panel, never the page; the visually hidden
   labels of its buttons are positioned within the scroller). */
.table-wrap { position: relative; }
.key-list th, .key-list td { padding-left: 0.5rem; padding-right: 0.5rem; vertical-align: top; }
.key-list tbody th { min-width: 9rem; overflow-wrap: break-word; }
.key-list td[data-label="Reads"] { min-width: 12rem; overflow-wrap: break-word; }
.key-list td[data-label="Last used"] code { overflow-wrap: anywhere; }
.key-list td.actions { vertical-align: middle; }
.settings > main { min-width: 0; }
@media (max-width: 48rem) { .settings { grid-template-columns: minmax(0, 1fr); } }
.badge-soon { background: var(--warn-soft); color: #6b4a00; border: 1px solid var(--warn-line); }
`;

const WEBHOOK_STYLES = `
.endpoint-url { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin-top: 0; overflow-wrap: anywhere; }
.endpoint-actions { margin-top: 1rem; }
.delivery-list .excerpt { max-width: 18rem; overflow-wrap: anywhere; font-size: 0.85rem; color: var(--muted); }
`;

const AUDIT_STYLES = `
.audit-list tbody th time { white-space: nowrap; }
.audit-list td::before { flex: none; }
.audit-list .value { min-width: 0; }
.audit-detail { display: block; color: var(--muted); font-size: 0.85rem; }
@media (max-width: 40rem) { .audit-list .value { text-align: right; } }
.audit-filters { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: 0 1rem; align-items: start; }
.audit-filters .field { margin-bottom: 0.75rem; }
.audit-filters select, .audit-filters input { width: 100%; height: 2.5rem; box-sizing: border-box; }
.audit-filters .button-row { margin-bottom: 0.75rem; align-self: end; }
.audit-details { overflow-wrap: anywhere; }
.audit-details code { overflow-wrap: anywhere; }
.audit-path { white-space: normal; }
.audit-pages { margin-top: 1rem; }
`;

export interface Asset {
  /** The URL path, with a content hash so that a changed file is fetched anew. */
  readonly path: string;
  readonly type: string;
  readonly body: string;
  readonly etag: string;
}

function asset(name: string, extension: string, type: string, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/app/assets/${name}.${hash}.${extension}`, type, body, etag: `"${hash}"` };
}

export const ASSETS = {
  css: asset(
    'app',
    'css',
    'text/css; charset=utf-8',
    CSS + RESTRICTION_STYLES + WEBHOOK_STYLES + AUDIT_STYLES,
  ),
  js: asset('app', 'js', 'text/javascript; charset=utf-8', JS),
  icon: asset('icon', 'svg', 'image/svg+xml', ICON_SVG),
} as const;

/** The assets' routes, in the web application's scope (/app): cached for a year. */
export function serveAssets(app: FastifyInstance, options: RouteShorthandOptions): void {
  for (const asset of Object.values(ASSETS)) {
    app.get(asset.path.slice('/app'.length), options, async (request, reply) => {
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.type(asset.type).send(asset.body);
    });
  }
}
