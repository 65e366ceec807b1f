// The release build's service worker (web/sw.js): after one visit the playground opens with the
// network off (CDP offline mode), saved workspace and editor included; a new build deployed
// between two visits is announced ("A new version is ready", Reload), and no page ever runs on
// files from two builds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { serve, launch, openPage, appReady, codeEditor, screenshot, axeViolations, ROOT, DIST } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

/** Resolves once this build's worker controls the page (boot.js registers it after the editor). */
const controlled = (page) => page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });

/** The build a page runs: the wasm its boot script names, and every wasm and glue it fetched. */
const build = (page) => page.evaluate(() => ({
  wasm: document.querySelector('script[data-converge-boot]').dataset.wasm.split('/').pop(),
  fetched: performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname.split('/').pop())
    .filter((f) => /^converge-web-/.test(f)),
}));

test('after one visit, a reload with the network off opens the playground and the saved session', { timeout: 120_000 }, async () => {
  const { page, context, problems } = await openPage(browser, server.url, { serviceWorkers: 'allow' });
  await codeEditor(page);
  const before = await page.locator('#steps').textContent();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.locator('#steps', { hasText: before }).waitFor({ state: 'detached' });
  const steps = await page.locator('#steps').textContent();
  await controlled(page);

  await context.setOffline(true);
  const from = server.requests.length;
  await page.reload();
  await appReady(page);
  await page.locator('#steps', { hasText: new RegExp(`^${steps}$`) }).waitFor();
  await codeEditor(page); // the editor bundle came from the worker's cache too
  assert.deepEqual(server.requests.slice(from), [], 'nothing reached the server');
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.locator('#steps', { hasText: new RegExp(`^${steps}$`) }).waitFor({ state: 'detached' });
  // The page under its other names opens offline too.
  for (const path of ['index.html', '?scenario=rapid-edits']) {
    await page.goto(`${server.url}${path}`);
    await appReady(page);
  }
  await page.locator('#lesson-h').waitFor();
  assert.deepEqual(server.requests.slice(from), [], 'still nothing reached the server');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a new build deployed between two visits is offered with a Reload, never mixed with the old one', { timeout: 180_000 }, async () => {
  // Build B: this dist/ with the module under another hashed name, finished as ./dev build does.
  const next = join(ROOT, 'target', 'e2e', 'dist-next');
  await rm(next, { recursive: true, force: true });
  await cp(DIST, next, { recursive: true, filter: (src) => !/\.(br|gz)$/.test(src) });
  const index = await readFile(join(next, 'index.html'), 'utf8');
  const old = index.match(/data-wasm="\/?(converge-web-([0-9a-f]+))_bg\.wasm"/);
  const renamed = `converge-web-${'0'.repeat(old[2].length)}`;
  await rename(join(next, `${old[1]}_bg.wasm`), join(next, `${renamed}_bg.wasm`));
  await rename(join(next, `${old[1]}.js`), join(next, `${renamed}.js`));
  await writeFile(join(next, 'index.html'), index.replaceAll(old[1], renamed).replace(/ integrity="[^"]*"/g, ''));
  execFileSync(process.execPath, [join(ROOT, 'web', 'release-files.mjs'), next]);

  const { page, context, problems } = await openPage(browser, server.url, { serviceWorkers: 'allow' });
  await controlled(page);
  try {
    server.serveFrom(next); // the deploy
    await page.reload();
    await appReady(page);
    const notice = page.getByRole('status').filter({ hasText: 'A new version is ready.' });
    await notice.waitFor({ timeout: 60_000 });
    await screenshot(page, 'update-ready');
    assert.deepEqual(await axeViolations(page), [], 'the notice passes axe');
    // Until the person reloads, this page is the old build, all of it.
    const seen = await build(page);
    assert.equal(seen.wasm, `${old[1]}_bg.wasm`);
    assert.ok(seen.fetched.every((f) => f.startsWith(old[1])), seen.fetched.join(', '));
    const reloaded = page.waitForEvent('load');
    await notice.getByRole('button', { name: 'Reload' }).click();
    await reloaded;
    await appReady(page);
    const now = await build(page);
    assert.equal(now.wasm, `${renamed}_bg.wasm`);
    assert.ok(now.fetched.every((f) => f.startsWith(renamed)), now.fetched.join(', '));
    assert.equal(await page.getByText('A new version is ready.').count(), 0);
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    assert.deepEqual(problems, []);
  } finally {
    server.serveFrom(DIST);
    await context.close();
    await rm(next, { recursive: true, force: true });
  }
});
