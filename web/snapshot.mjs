// Puts the playground's first screen into dist/index.html as plain markup (`./dev build`, after
// `trunk build --release`): the built app is opened in headless Chromium, and the screen it draws
// for a first visit (the starter cluster, no saved workspace) is copied into the page, marked
// `data-snapshot`. Each gallery scenario's first screen (`?scenario=<id>`) goes to
// dist/first/<id>.html, which boot.js fetches for such a link. web/boot.js shows the copy at once, keeps what the person does, and replays it
// into the app once the wasm has arrived (ARCHITECTURE.md, "First load").
//
// The copy is taken from this very build, so it can never be stale. It is taken with the
// CodeMirror bundle refused, because the app's first screen has the editor's textarea. It also
// drops the wasm preload link, so the module's download starts after the copy is interactive.
//
// Usage: node web/snapshot.mjs [dist]
import { readFile, writeFile, rm, mkdir } from 'node:fs/promises';
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
const firstDir = join(dist, 'first');
await rm(firstDir, { recursive: true, force: true });

/** The screen the app draws for a first visit to `path`, as markup with its form state. */
async function capture(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route('**/editor-bundle/**', (route) => route.abort());
    await page.goto(url);
    await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null, { timeout: 60_000 });
    if (errors.length) fail(`${url}: the app reported errors: ${errors.join('; ')}`);
    const markup = await page.evaluate(() => {
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
    if (!/<button id="step"/.test(markup)) fail(`${url}: the copied screen has no Step button`);
    if (/<script/i.test(markup)) fail(`${url}: the copied screen contains a script element`);
    // The gallery's ids, read from the app itself (the starter's screen lists them).
    let ids = [];
    if (!new URL(url).search) {
      await page.getByRole('button', { name: 'Open the gallery' }).click();
      ids = await page.evaluate(() => [...document.querySelectorAll('[data-scenario]')].map((e) => e.dataset.scenario));
    }
    return { markup, ids };
  } finally {
    await context.close();
  }
}

const server = await serve(dist);
const browser = await launch();
let markup;
let scenarios = 0;
try {
  const starter = await capture(browser, server.url);
  markup = starter.markup;
  if (starter.ids.length === 0) fail('the gallery lists no scenario');
  await mkdir(firstDir, { recursive: true });
  for (const id of starter.ids) {
    if (!/^[a-z0-9-]+$/.test(id)) fail(`gallery id ${JSON.stringify(id)} is not URL-safe`);
    const one = await capture(browser, `${server.url}?scenario=${id}`);
    await writeFile(join(firstDir, `${id}.html`), `${one.markup}\n`);
    scenarios += 1;
  }
} finally {
  await browser.close();
  await server.close();
}

if (!html.includes('</noscript>')) fail('index.html has no <noscript> to put the copy after');
html = html
  .replace('</noscript>', () => `</noscript>\n    ${markup}<!-- /snapshot -->`)
  .replace(WASM_PRELOAD, '');
await writeFile(indexPath, html);
console.log(`snapshot: ${markup.length} bytes of markup in ${indexPath}; ${scenarios} scenario screens in ${firstDir}`);
