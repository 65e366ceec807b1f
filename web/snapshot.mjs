// Puts the playground's first screen into dist/index.html as plain markup (`./dev build`, after
// `trunk build --release`): the built app is opened in headless Chromium, and the screen it draws
// for a first visit (the starter cluster, no saved workspace) is copied into the page, marked
// `data-snapshot`. web/boot.js shows the copy at once, keeps what the person does, and replays it
// into the app once the wasm has arrived (ARCHITECTURE.md, "First load").
//
// The copy is taken from this very build, so it can never be stale. It is taken with the
// CodeMirror bundle refused, because the app's first screen has the editor's textarea. It also
// drops the wasm preload link, so the module's download starts after the copy is interactive.
//
// Usage: node web/snapshot.mjs [dist]
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { serve, launch, DIST } from '../tests/e2e/harness.mjs';

const dist = resolve(process.argv[2] ?? DIST);
const indexPath = join(dist, 'index.html');
const SNAPSHOT = /\n?\s*<div class="shell" data-snapshot[^]*?<!-- \/snapshot -->/;
const WASM_PRELOAD = /<link rel="preload" href="[^"]*_bg\.wasm"[^>]*>/;

function fail(message) {
  console.error(`snapshot: ${message}`);
  process.exit(1);
}

let html = (await readFile(indexPath, 'utf8')).replace(SNAPSHOT, '');
await writeFile(indexPath, html); // the app must draw itself, not find an older copy

const server = await serve(dist);
const browser = await launch();
let markup;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/editor-bundle/**', (route) => route.abort());
  await page.goto(server.url);
  await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null, { timeout: 60_000 });
  if (errors.length) fail(`the app reported errors: ${errors.join('; ')}`);
  markup = await page.evaluate(() => {
    const live = document.querySelector('body > .shell');
    const copy = live.cloneNode(true);
    // Form state lives in properties, which markup does not carry: write it as attributes.
    const pairs = (sel) => [...live.querySelectorAll(sel)].map((el, i) => [el, copy.querySelectorAll(sel)[i]]);
    for (const [a, b] of pairs('textarea')) b.textContent = a.value;
    for (const [a, b] of pairs('input')) {
      if (a.type === 'checkbox' || a.type === 'radio') b.toggleAttribute('checked', a.checked);
      else if (a.type !== 'file') b.setAttribute('value', a.value);
    }
    for (const [a, b] of pairs('option')) b.toggleAttribute('selected', a.selected);
    copy.setAttribute('data-snapshot', '');
    return copy.outerHTML;
  });
  await context.close();
} finally {
  await browser.close();
  await server.close();
}

if (!/<button id="step"/.test(markup)) fail('the copied screen has no Step button');
if (/<script/i.test(markup)) fail('the copied screen contains a script element');
if (!html.includes('</noscript>')) fail('index.html has no <noscript> to put the copy after');
html = html
  .replace('</noscript>', () => `</noscript>\n    ${markup}<!-- /snapshot -->`)
  .replace(WASM_PRELOAD, '');
await writeFile(indexPath, html);
console.log(`snapshot: ${markup.length} bytes of markup in ${indexPath}`);
