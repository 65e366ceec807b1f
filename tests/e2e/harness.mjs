// Shared browser-test harness: serves dist/ on a loopback port with the same rules as
// `./dev preview` (web/preview.mjs: precompressed files, cache headers) and launches Debian's
// chromium through playwright-core (never a downloaded browser).
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { preview } from '../../web/preview.mjs';

export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist');
export const SHOTS = join(ROOT, 'target', 'e2e');

/** Serves dir on 127.0.0.1 at a free port; resolves to { url, close, requests, serveFrom }. */
export function serve(dir = DIST) {
  return preview(dir);
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

/**
 * Opens a page that fails the test on any uncaught page error or console error.
 * With `plainEditor`, the CodeMirror bundle request is refused so the page keeps the editor's
 * textarea form (its supported fallback); tests that drive the playground through form fields
 * use it, and tests/e2e/editor.test.mjs covers CodeMirror itself.
 * The release build's service worker is blocked (Playwright's routes do not see what a worker
 * answers from its cache) unless `serviceWorkers` is 'allow' (tests/e2e/offline.test.mjs).
 * Unless `ready` is false, waits until the app has drawn itself or shown its panic panel.
 */
export async function openPage(browser, url, { colorScheme = 'light', viewport, plainEditor = false, beforeGoto, ready = true, serviceWorkers = 'block' } = {}) {
  const context = await browser.newContext({ colorScheme, viewport: viewport ?? { width: 1280, height: 800 }, serviceWorkers });
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
 * Resolves once the app is drawn and listens (its root has replaced index.html's `.boot-skeleton`
 * and is no longer `aria-busy`), or its panic panel is there. Read from the DOM: a fake clock
 * (page.clock) also fakes Performance marks.
 */
export async function appReady(page) {
  await page.waitForFunction(() => document.querySelector('body > .shell[aria-busy="false"]') !== null
    || document.getElementById('panic-panel') !== null, null, { timeout: 60_000 });
}

/** The byte length of every WebAssembly.Memory in the page (the app has one). */
export async function wasmMemory(context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  const { result: proto } = await cdp.send('Runtime.evaluate', { expression: 'WebAssembly.Memory.prototype' });
  const { objects } = await cdp.send('Runtime.queryObjects', { prototypeObjectId: proto.objectId });
  const { result } = await cdp.send('Runtime.callFunctionOn', {
    objectId: objects.objectId,
    functionDeclaration: 'function () { return this.map((m) => m.buffer.byteLength); }',
    returnByValue: true,
  });
  await cdp.detach();
  return result.value;
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

/**
 * The large starter's rolling update, started as a person starts it: the image line is below the
 * editor's fold, so the editor is scrolled with the mouse wheel until CodeMirror draws that line;
 * `nginx:1.27` is retyped as `nginx:1.28` and Apply clicked. Resolves once the answer is a 200.
 */
export async function applyNewImage(page) {
  await codeEditor(page);
  const imageLine = page.locator('.cm-content > .cm-line', { hasText: '"image": "nginx:1.27"' });
  await page.locator('.cm-scroller').hover();
  for (let i = 0; i < 40 && (await imageLine.count()) === 0; i++) {
    await page.mouse.wheel(0, 120);
    await page.waitForFunction(() => new Promise((r) => requestAnimationFrame(() => r(true))));
  }
  const line = (await imageLine.first().innerText()).trim();
  await retypeLine(page, '"image": "nginx:1.27"', line.replace('nginx:1.27', 'nginx:1.28'));
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
}

// ---- axe-core (@axe-core/playwright, pinned in package-lock.json) ------------------------------

/**
 * Rules switched off for the whole suite, each with its reason. Empty: every rule of axe-core
 * 4.14 (WCAG 2.0-2.2 A and AA, best practices) runs.
 */
export const AXE_DISABLED = {};

/** axe-core's violations on the page as it stands, as `rule (impact): selectors` lines. */
export async function axeViolations(page) {
  const { default: AxeBuilder } = await import('@axe-core/playwright');
  const builder = new AxeBuilder({ page });
  const off = Object.keys(AXE_DISABLED);
  if (off.length) builder.disableRules(off);
  const { violations } = await builder.analyze();
  return violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
