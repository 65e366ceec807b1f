// The spec editor: a textarea at once, CodeMirror after the first render, and the textarea
// again (with a notice) when the CodeMirror bundle cannot load.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, screenshot, clearEditor, typeLines, editorText } from './harness.mjs';

const BUNDLE = '**/editor-bundle/codemirror.js';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

/**
 * Like harness.openPage, but lets a test route requests before the page loads. Console errors
 * matching `allow` (e.g. the blocked bundle request) are not problems.
 */
async function open({ colorScheme = 'light', beforeLoad, allow } = {}) {
  const context = await browser.newContext({ colorScheme, viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !(allow && allow.test(m.text()))) problems.push(`console: ${m.text()}`);
  });
  await beforeLoad?.(page);
  await page.goto(server.url);
  return { page, context, problems };
}

/** Opens the page and waits until CodeMirror has replaced the textarea. */
async function openWithCodeMirror(options) {
  const opened = await open(options);
  await opened.page.locator('.cm-editor').waitFor();
  return opened;
}

const editor = (page) => page.getByRole('textbox', { name: 'Object spec' });
const tree = (page) => page.locator('.object-list');
const applyButton = (page) => page.locator('#apply');

/** Replaces the whole document as a person would: select all, delete, type it key by key. */
async function replaceText(page, text) {
  await clearEditor(page);
  await typeLines(page, text);
}

const CONFIG_MAP = '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": { "name": "typed", "namespace": "default" }\n}';
// Line 3 has a missing value: serde_json stops at the comma, column 11.
const MALFORMED = '{\n  "kind": "Pod",\n  "spec": ,\n  "metadata": {}\n}';

test('CodeMirror loads lazily, after the app has rendered its textarea', async () => {
  const requests = [];
  let textareaWhenRequested = null;
  let wasmBeforeBundle = false;
  const { page, context, problems } = await open({
    beforeLoad: async (p) => {
      p.on('request', (r) => requests.push(r.url()));
      await p.route(BUNDLE, async (route) => {
        // The bundle is requested only once the app is on screen and usable.
        wasmBeforeBundle = requests.some((u) => u.endsWith('.wasm'));
        textareaWhenRequested = await p.evaluate(() => document.querySelector('textarea#spec-editor') !== null);
        await route.continue();
      });
    },
  });
  await page.locator('.cm-editor').waitFor();
  assert.equal(wasmBeforeBundle, true, 'the wasm app was requested before the bundle');
  assert.equal(textareaWhenRequested, true, 'the textarea was rendered before the bundle was requested');
  // The bundle comes in parts (web/editor/build.mjs), each fetched once.
  const bundle = requests.filter((u) => u.includes('editor-bundle'));
  assert.ok(bundle.length > 1, `the bundle's parts: ${bundle.join(', ')}`);
  assert.equal(new Set(bundle).size, bundle.length, `each part once: ${bundle.join(', ')}`);

  // The textarea is gone; CodeMirror's content element carries the id and the accessible name.
  assert.equal(await page.locator('textarea#spec-editor').count(), 0);
  assert.equal(await editor(page).getAttribute('id'), 'spec-editor');
  assert.equal(await editor(page).getAttribute('contenteditable'), 'true');
  assert.match(await editor(page).innerText(), /"kind": "Deployment"/);
  assert.ok(await page.locator('.cm-lineNumbers .cm-gutterElement', { hasText: /^13$/ }).isVisible(), 'line numbers');
  // JSON is highlighted: the key "kind" is a styled token, not plain text.
  assert.ok(await page.locator('.cm-line span', { hasText: '"kind"' }).count() > 0, 'syntax highlighting');
  assert.deepEqual(problems, []);
  await context.close();
});

test('typing in CodeMirror changes the document the app applies', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  assert.match(await editor(page).innerText(), /"kind": "Deployment"/);
  await replaceText(page, CONFIG_MAP);
  assert.match(await editor(page).innerText(), /"kind": "ConfigMap"/);
  await applyButton(page).click();
  await page.locator('#apply-result.ok').waitFor();
  await tree(page).getByText('ConfigMap typed').waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('malformed JSON is marked at its line and column, in the editor and in the list', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  await replaceText(page, MALFORMED);
  const item = page.locator('#spec-editor-diagnostics li');
  await item.waitFor();
  assert.match(await item.innerText(), /^line 3, column 11: expected value$/);
  // The lint mark sits on the third line, on the comma at column 11.
  const mark = page.locator('.cm-lintRange-error');
  await mark.waitFor();
  assert.equal(await mark.innerText(), ',');
  const lineOfMark = await mark.evaluate((el) => {
    const line = el.closest('.cm-line');
    return [...line.parentElement.querySelectorAll(':scope > .cm-line')].indexOf(line) + 1;
  });
  assert.equal(lineOfMark, 3);
  assert.equal(await page.locator('.cm-lint-marker-error').count(), 1, 'one marker in the lint gutter');
  assert.equal(await editor(page).getAttribute('aria-invalid'), 'true');
  await screenshot(page, 'editor-diagnostic-light');

  // Fixing the text clears the marks.
  await replaceText(page, CONFIG_MAP);
  await page.locator('.cm-lintRange-error').waitFor({ state: 'detached' });
  assert.equal(await item.count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('Ctrl+Enter applies without inserting a line', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  await replaceText(page, CONFIG_MAP);
  await page.keyboard.press('Control+Enter');
  await page.locator('#apply-result.ok').waitFor();
  await tree(page).getByText('ConfigMap typed').waitFor();
  // The editor now shows the stored object (server-set fields), and no line was inserted.
  await page.waitForFunction(() => document.querySelector('.cm-content')?.innerText.includes('"resourceVersion"'));
  assert.doesNotMatch(await editor(page).innerText(), /\n\s*\n/);

  await replaceText(page, MALFORMED);
  await page.keyboard.press('Control+Enter');
  await page.locator('#spec-editor-diagnostics li', { hasText: 'line 3, column 11: expected value' }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('undo restores the previous text and redo brings the edit back', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  await replaceText(page, CONFIG_MAP);
  await page.waitForFunction(() => document.querySelector('.cm-content')?.innerText.includes('"ConfigMap"'));
  // Typing is undone in the groups CodeMirror made of it (a pause starts a new one), then the
  // delete: a person presses Ctrl+Z until the old text is back, and Ctrl+Shift+Z the other way.
  const shows = (kind) => page.evaluate((k) => document.querySelector('.cm-content')?.innerText.includes(`"kind": "${k}"`), kind);
  for (let i = 0; i < 50 && !(await shows('Deployment')); i++) await page.keyboard.press('Control+z');
  assert.equal(await shows('Deployment'), true, 'undo brought the Deployment back');
  // KeyZ with Shift held sends key "Z", as a real keyboard does.
  for (let i = 0; i < 50 && (await editorText(page)) !== CONFIG_MAP; i++) await page.keyboard.press('Control+Shift+KeyZ');
  assert.equal(await editorText(page), CONFIG_MAP, 'redo brought the typed text back');
  assert.deepEqual(problems, []);
  await context.close();
});

test('Format replaces the document from the app; undo brings the typed text back', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  const compact = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed","namespace":"default"}}';
  await replaceText(page, compact);
  await page.getByRole('button', { name: 'Format', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('.cm-content')?.innerText.startsWith('{\n  "apiVersion": "v1",'));
  assert.equal(await page.locator('.cm-editor').count(), 1, 'the same editor, not a remount');
  await editor(page).focus();
  await page.keyboard.press('Control+z');
  await page.waitForFunction((text) => document.querySelector('.cm-content')?.innerText === text, compact);
  assert.deepEqual(problems, []);
  await context.close();
});

test('YAML is highlighted as YAML', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  await page.getByRole('button', { name: 'YAML', exact: true }).click();
  await page.waitForFunction(() => /^apiVersion: apps\/v1/.test(document.querySelector('.cm-content')?.innerText ?? ''));
  await replaceText(page, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y  # a comment\ndata:\n  n: 3\n');
  const key = page.locator('.cm-line span', { hasText: /^kind$/ });
  await key.waitFor();
  const colours = await page.evaluate(() => {
    const colour = (re) => {
      const span = [...document.querySelectorAll('.cm-line span')].find((s) => re.test(s.textContent));
      return span && getComputedStyle(span).color;
    };
    return { key: colour(/^kind$/), comment: colour(/^# a comment$/) };
  });
  assert.deepEqual(colours, { key: 'rgb(38, 87, 201)', comment: 'rgb(89, 99, 110)' });
  assert.equal(await page.locator('#spec-editor-diagnostics li').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('Tab and Shift+Tab move focus out of the editor instead of indenting', async () => {
  const { page, context, problems } = await openWithCodeMirror();
  const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
  const inEditor = () => page.evaluate(() => !!document.activeElement?.closest('.cm-editor'));
  // Reachable from the Apply button with the keyboard alone.
  await applyButton(page).focus();
  await page.keyboard.press('Tab');
  assert.equal(await focusedId(), 'spec-editor');
  const before = await editor(page).innerText();
  await page.keyboard.press('Tab');
  assert.equal(await inEditor(), false, 'Tab left the editor');
  assert.equal(await editor(page).innerText(), before, 'Tab inserted nothing');

  await editor(page).focus();
  await page.keyboard.press('Shift+Tab');
  assert.equal(await focusedId(), 'apply');
  assert.match(await page.locator('#spec-editor-help').innerText(), /Tab moves to the next control/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the bundle cannot load, the textarea keeps working and says why', async () => {
  const { page, context, problems } = await open({
    beforeLoad: (p) => p.route(BUNDLE, (route) => route.abort()),
    allow: /Failed to load resource|Failed to fetch dynamically imported module/,
  });
  await page.locator('.editor-notice').waitFor();
  assert.match(await page.locator('.editor-notice').innerText(), /could not load/);
  assert.equal(await page.locator('.cm-editor').count(), 0);
  const area = editor(page);
  assert.equal(await area.evaluate((el) => el.tagName), 'TEXTAREA');

  await area.click();
  await page.keyboard.press('Control+a');
  await page.keyboard.type(MALFORMED);
  assert.equal(await area.inputValue(), MALFORMED);
  await page.locator('#spec-editor-diagnostics li', { hasText: 'line 3, column 11: expected value' }).waitFor();
  assert.equal(await area.getAttribute('aria-invalid'), 'true');
  await area.press('Control+Enter');
  assert.equal(await area.inputValue(), MALFORMED, 'Ctrl+Enter inserted nothing');

  await page.keyboard.press('Control+a');
  await page.keyboard.type(CONFIG_MAP);
  assert.equal(await area.inputValue(), CONFIG_MAP);
  await area.press('Meta+Enter');
  await page.locator('#apply-result.ok').waitFor();
  await tree(page).getByText('ConfigMap typed').waitFor();
  await area.press('Tab');
  assert.notEqual(await page.evaluate(() => document.activeElement?.id), 'spec-editor', 'Tab left the textarea');
  await screenshot(page, 'editor-fallback-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the editor reads in the light and dark themes', async () => {
  for (const colorScheme of ['light', 'dark']) {
    const { page, context, problems } = await openWithCodeMirror({ colorScheme });
    await replaceText(page, MALFORMED);
    await page.locator('.cm-lintRange-error').waitFor();
    const colours = await page.evaluate(() => {
      const style = (sel) => getComputedStyle(document.querySelector(sel));
      return { bg: style('.cm-editor').backgroundColor, text: style('.cm-content').color };
    });
    const expected = colorScheme === 'dark'
      ? { bg: 'rgb(13, 17, 23)', text: 'rgb(230, 237, 243)' }
      : { bg: 'rgb(246, 248, 250)', text: 'rgb(27, 31, 36)' };
    assert.deepEqual(colours, expected);
    await page.locator('.cm-editor').screenshot({ path: (await screenshot(page, `editor-${colorScheme}`)).replace(/\.png$/, '-closeup.png') });
    assert.deepEqual(problems, []);
    await context.close();
  }
});
