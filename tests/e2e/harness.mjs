// Shared browser-test harness: serves dist/ on a loopback port and launches Debian's chromium
// through playwright-core (never a downloaded browser).
import { createServer } from 'node:http';
import { readFile, stat, mkdir } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist');
export const SHOTS = join(ROOT, 'target', 'e2e');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/** Serves dir on 127.0.0.1 at a free port; resolves to { url, close }. */
export async function serve(dir = DIST) {
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(dir, path));
      if (!file.startsWith(dir)) { res.writeHead(403).end(); return; }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((ok) => server.close(ok)) };
}

/** Launches headless Debian chromium with flags that keep it off the (closed) network. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'],
  });
}

/** Opens a page that fails the test on any uncaught page error or console error. */
/**
 * With `plainEditor`, the CodeMirror bundle request is refused so the page keeps the editor's
 * textarea form (its supported fallback); tests that drive the playground through form fields
 * use it, and tests/e2e/editor.test.mjs covers CodeMirror itself.
 */
/**
 * (boot.js replays input kept on the copy after a `setTimeout`: with a paused `page.clock`,
 * advance the clock for it to run.)
 * Unless `ready` is false, waits until the app has drawn itself or shown its panic panel: a first visit shows a pre-drawn copy of the
 * playground before that (web/boot.js), which tests/e2e/first-load.test.mjs covers.
 */
export async function openPage(browser, url, { colorScheme = 'light', viewport, plainEditor = false, beforeGoto, ready = true } = {}) {
  const context = await browser.newContext({ colorScheme, viewport: viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  const expected = plainEditor ? /Failed to load resource|Failed to fetch dynamically imported module/ : null;
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !(expected && expected.test(m.text()))) problems.push(`console: ${m.text()}`);
  });
  if (plainEditor) await page.route('**/editor-bundle/codemirror.js', (route) => route.abort());
  // `beforeGoto(page)` runs before the first navigation (install a fake clock, an init script).
  if (beforeGoto) await beforeGoto(page);
  await page.goto(url);
  if (ready) await appReady(page);
  return { page, context, problems };
}

/**
 * Resolves once the app's own root (not the pre-drawn copy, `[data-snapshot]`) is on the page, or
 * its panic panel is. Read from the DOM: a fake clock (page.clock) also fakes Performance marks.
 */
export async function appReady(page) {
  await page.waitForFunction(() => document.querySelector('body > .shell:not([data-snapshot])') !== null
    || document.getElementById('panic-panel') !== null, null, { timeout: 60_000 });
}

/**
 * Runs in the page (`page.evaluate(screenMarkup)`): the app's root as markup, with the form state
 * that lives in properties (textarea text, input values, checked boxes, selected options) written
 * as attributes. web/snapshot.mjs pre-draws first screens with it; first-load.test.mjs compares.
 */
export function screenMarkup() {
  const live = document.querySelector('body > .shell:not([data-snapshot])');
  const copy = live.cloneNode(true);
  const pairs = (sel) => [...live.querySelectorAll(sel)].map((el, i) => [el, copy.querySelectorAll(sel)[i]]);
  for (const [a, b] of pairs('textarea')) b.textContent = a.value;
  for (const [a, b] of pairs('input')) {
    if (a.type === 'checkbox' || a.type === 'radio') b.toggleAttribute('checked', a.checked);
    else if (a.type !== 'file') b.setAttribute('value', a.value);
  }
  for (const [a, b] of pairs('option')) b.toggleAttribute('selected', a.selected);
  return copy.outerHTML;
}

export async function screenshot(page, name) {
  await mkdir(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

// ---- The spec editor as a person uses it: CodeMirror, typed into with the keyboard ----------

/** Waits until CodeMirror has replaced the first paint's textarea and shows `contains`. */
export async function codeEditor(page, contains = '"kind": "Deployment"') {
  await page.locator('.cm-editor .cm-content').waitFor({ timeout: 60_000 });
  await page.waitForFunction((c) => document.querySelector('.cm-content')?.textContent.includes(c), contains, { timeout: 60_000 });
}

/**
 * The editor's whole text, as a person reads it by scrolling. CodeMirror draws only the lines
 * near the viewport, so it is read from the editor itself: what `EditorView.findFromDOM` does
 * (@codemirror/view 6.43, pinned in package-lock.json: the content element's `cmTile`).
 */
export function editorText(page) {
  return page.evaluate(() => {
    const view = document.querySelector('.cm-content')?.cmTile?.root?.view;
    if (!view) throw new Error('no CodeMirror view on .cm-content (did @codemirror/view change?)');
    return view.state.doc.toString();
  });
}

/**
 * Types `text` into the focused CodeMirror editor key by key. After each Enter the editor indents
 * the new line itself; Shift+Home selects that indentation so the line's own leading spaces
 * replace it, and the document ends up exactly as typed, in JSON and in YAML.
 */
export async function typeLines(page, text, { delay = 0 } = {}) {
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (i > 0) {
      await page.keyboard.press('Enter');
      await page.keyboard.press('Shift+Home');
    }
    if (line) await page.keyboard.type(line, { delay });
  }
}

/** Empties the editor as a person would: click into it, select all, delete. */
export async function clearEditor(page) {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+a');
  await page.keyboard.press('Backspace');
  await page.waitForFunction(() => document.querySelector('.cm-content')?.textContent === '');
}

/** Replaces the editor's whole text by typing it. */
export async function retypeEditor(page, text) {
  await clearEditor(page);
  await typeLines(page, text);
}

/**
 * Retypes the first line that contains `contains`: click on it, End, Shift+Home (which selects the
 * line's text after its indentation), then type `line` (without indentation) over it.
 */
export async function retypeLine(page, contains, line) {
  const target = page.locator('.cm-content > .cm-line', { hasText: contains }).first();
  await target.click();
  await page.keyboard.press('End');
  await page.keyboard.press('Shift+Home');
  await page.keyboard.type(line.trimStart());
  await page.waitForFunction((l) => [...document.querySelectorAll('.cm-content > .cm-line')]
    .some((el) => el.textContent.trimStart() === l), line.trimStart());
}
