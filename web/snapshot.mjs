// Pre-draws the playground's first screens (`./dev build`, after `trunk build --release`). The
// built app is opened in headless Chromium, and the screen it draws for a first visit (the
// starter cluster, no saved workspace) is copied into dist/index.html as plain markup, between
// `<!-- snapshot -->` markers, marked `data-snapshot` (with the wasm's hashed name, so a cached
// copy from another build is refused), hidden and `inert` until web/boot.js claims it.
// Each gallery scenario's first screen (`?scenario=<id>`) goes to dist/first/<id>.html, which
// boot.js fetches for such a link. ARCHITECTURE.md, "First load".
//
// Copies come from this very build, so they are never stale. They are taken with the CodeMirror
// bundle's request held (never answered), because the app's first screen has the editor's
// textarea; the starter's is taken twice and must come out the same. The wasm preload link is
// dropped, so the module's download starts after a copy is interactive.
//
// Usage: node web/snapshot.mjs [dist]
import { readFile, writeFile, rm, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { serve, launch, screenMarkup, DIST } from '../tests/e2e/harness.mjs';

const dist = resolve(process.argv[2] ?? DIST);
const indexPath = join(dist, 'index.html');
const firstDir = join(dist, 'first');
const MARKED = /\n? *<!-- snapshot -->[^]*?<!-- \/snapshot -->/g;
const WASM_PRELOAD = /<link rel="preload" href="[^"]*_bg\.wasm"[^>]*>/g;

/** The screen the app draws for a first visit to `url`, and (for the starter) the gallery's ids. */
async function capture(browser, url, build) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.route('**/editor-bundle/**', () => {}); // held: the textarea stays
    await page.goto(url);
    await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null, { timeout: 60_000 });
    if (errors.length) throw new Error(`${url}: the app reported errors: ${errors.join('; ')}`);
    // Hidden and inert until boot.js claims it; marked with the build it was drawn by.
    const markup = (await page.evaluate(screenMarkup))
      .replace(/^<div class="shell"/, () => `<div class="shell boot-unclaimed" data-snapshot="${build}" inert=""`);
    const problem = [
      [!markup.startsWith('<div class="shell boot-unclaimed" data-snapshot'), 'its root is not the app\'s .shell'],
      [!/<button id="step"/.test(markup), 'it has no Step button'],
      [/<script/i.test(markup), 'it contains a script element'],
      [!/data-editor="textarea"/.test(markup) || /editor-notice/.test(markup), 'its editor is not the plain textarea'],
    ].find(([bad]) => bad);
    if (problem) throw new Error(`${url}: the copied screen is wrong: ${problem[1]}`);
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

async function main() {
  let html = (await readFile(indexPath, 'utf8')).replace(MARKED, '');
  const build = html.match(/data-wasm="(?:[^"]*\/)?([^"/]+_bg\.wasm)"/)?.[1];
  if (!build) throw new Error('index.html names no wasm module (data-wasm)');
  await writeFile(indexPath, html); // the app must draw itself, not find an older copy
  await rm(firstDir, { recursive: true, force: true });

  const server = await serve(dist);
  const browser = await launch();
  let starter;
  let scenarios = 0;
  try {
    starter = await capture(browser, server.url, build);
    const again = await capture(browser, server.url, build);
    if (again.markup !== starter.markup) throw new Error('the starter screen differs between two loads');
    if (starter.ids.length === 0) throw new Error('the gallery lists no scenario');
    await mkdir(firstDir, { recursive: true });
    for (const id of starter.ids) {
      if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`gallery id ${JSON.stringify(id)} is not URL-safe`);
      const one = await capture(browser, `${server.url}?scenario=${id}`, build);
      await writeFile(join(firstDir, `${id}.html`), `${one.markup}\n`);
      scenarios += 1;
    }
  } finally {
    await browser.close();
    await server.close();
  }

  if (!html.includes('</noscript>')) throw new Error('index.html has no <noscript> to put the copy after');
  html = html
    .replace('</noscript>', () => `</noscript>\n    <!-- snapshot -->${starter.markup}<!-- /snapshot -->`)
    .replace(WASM_PRELOAD, '');
  const copies = html.match(/data-snapshot/g)?.length ?? 0;
  if (copies !== 1) throw new Error(`index.html would hold ${copies} copies of the first screen`);
  await writeFile(indexPath, html);
  console.log(`snapshot: ${starter.markup.length} bytes of markup in ${indexPath}; ${scenarios} scenario screens in ${firstDir}`);
}

try {
  await main();
} catch (e) {
  console.error(`snapshot: ${e.message}`);
  process.exit(1);
}
