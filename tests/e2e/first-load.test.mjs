// First-load budget of issue 6, measured in the browser. A first visit shows the playground's
// first screen pre-drawn in index.html (web/snapshot.mjs) and listening (web/boot.js marks
// `converge-interactive`); presses and typing are kept and replayed once the app has drawn itself
// (`converge-ready`, after the wasm). Every resource Chromium starts to fetch before each mark is
// counted, each body compressed with gzip -9 as a server would send it, summed per kind (wasm,
// JS, CSS, HTML, other). The CodeMirror bundle starts later and is listed apart.
// The figures go to target/e2e/first-load.json for BENCHMARKS.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { serve, launch, openPage, appReady, screenshot, screenMarkup, DIST, SHOTS } from './harness.mjs';

const BUDGET_BYTES = 250_000; // "250 KB" in the issue: decimal kilobytes
// Until the app itself (the wasm) fits the budget, growth of the load up to `converge-ready`
// past this bound fails the run. On 2026-12-01 it was 637,327 bytes (the wasm 616,999); the
// Kubernetes 1.32 fidelity fixes of session 6 (graceful pod deletion, the scheduler's scores,
// the full scale-down ranking, kubelet back-off) brought it to 655,256, and the scenario
// language's `matches` (regex-lite) and counts to 686,516. Session 7's API server for
// `converge serve` (strategic merge patch and /scale, which the wasm links because they sit
// behind ApiServer::handle; the step reports' watch events), the share link's own v1 types and
// the web crate's Elm loop brought the scenario link to 702,780. Session 8's Events (client-go's
// correlator in the engine, the recorders of five controllers, the scenario language's `events`
// and the status panel's Events table) brought the starter to 719,989, and aggregated discovery
// with the scenario language's {labels}/{owner} targets the scenario link to 726,688. Bringing
// it down is issues 15 and 20.
const READY_BOUND_BYTES = 735_000;

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const kindOf = (url) => {
  const ext = extname(new URL(url).pathname).slice(1);
  return ['wasm', 'js', 'css', 'html'].includes(ext) ? ext : (ext === '' ? 'html' : 'other');
};

const sum = (rows) => rows.reduce((t, x) => t + x.gzip, 0);
const byKind = (rows) => rows.reduce((k, x) => ({ ...k, [x.kind]: (k[x.kind] ?? 0) + x.gzip }), {});

/** Holds back `page`'s wasm request; resolves to the function that lets it through. */
async function holdWasm(page) {
  let release;
  const held = new Promise((ok) => { release = ok; });
  await page.route('**/*_bg.wasm', async (route) => { await held; await route.continue(); });
  return release;
}

/** Opens `url` with the wasm held back until `release()` is called. */
async function openHeld(url, beforeGoto) {
  let release;
  const opened = await openPage(browser, url, {
    ready: false,
    beforeGoto: async (p) => {
      await beforeGoto?.(p);
      release = await holdWasm(p);
    },
  });
  return { ...opened, release };
}

/** What `url` fetches before each mark, gzip -9 per file, with the marks' times. */
async function measure(url) {
  const bodies = new Map();
  const { page, context, problems } = await openPage(browser, url, {
    beforeGoto: async (p) => {
      p.on('response', (r) => {
        if (r.status() === 200) bodies.set(r.url(), r.body().catch(() => null));
      });
    },
  });
  // Let lazy loads that start after the app arrive, so they are listed (not counted).
  await page.waitForLoadState('networkidle');
  const timing = await page.evaluate(() => ({
    interactive: performance.getEntriesByName('converge-interactive')[0]?.startTime ?? null,
    ready: performance.getEntriesByName('converge-ready')[0]?.startTime ?? null,
    resources: performance.getEntriesByType('resource').map((e) => ({ url: e.name, start: e.startTime })),
  }));
  assert.notEqual(timing.interactive, null, `${url}: web/boot.js marks converge-interactive on the pre-drawn screen`);
  assert.notEqual(timing.ready, null, `${url}: the app marks converge-ready on its first render`);
  assert.ok(timing.interactive < timing.ready, `${url}: the pre-drawn screen is interactive before the app`);
  const rows = [];
  for (const { url: u, start } of [{ url: page.url(), start: 0 }, ...timing.resources]) {
    const body = await bodies.get(u);
    if (!body) continue;
    rows.push({ file: new URL(u).pathname, kind: kindOf(u), start, raw: body.length,
      gzip: gzipSync(body, { level: 9 }).length });
  }
  assert.deepEqual(problems, []);
  await context.close();
  const first = rows.filter((x) => x.start < timing.interactive);
  const app = rows.filter((x) => x.start < timing.ready);
  const later = rows.filter((x) => x.start >= timing.ready);
  return {
    interactive: { total_gzip: sum(first), ms: timing.interactive, by_kind_gzip: byKind(first), files: first },
    ready: { total_gzip: sum(app), ms: timing.ready, by_kind_gzip: byKind(app), files: app },
    later,
  };
}

test('what the browser fetches before the playground is interactive, and before the app is, gzip', { timeout: 120_000 }, async () => {
  const report = { budget: BUDGET_BYTES };
  for (const [name, url] of [['starter', server.url], ['scenario link', `${server.url}?scenario=rapid-edits`]]) {
    const r = await measure(url);
    report[name] = r;
    const { interactive: first, ready: app } = r;
    console.log(`first load (${name}): interactive after ${first.total_gzip} bytes gzip (${JSON.stringify(first.by_kind_gzip)}), ` +
      `${first.total_gzip <= BUDGET_BYTES ? 'within' : 'OVER'} the budget of ${BUDGET_BYTES}; ` +
      `app ready after ${app.total_gzip} bytes gzip (${JSON.stringify(app.by_kind_gzip)}); ` +
      `later: ${r.later.map((x) => `${x.file} ${x.gzip}`).join(', ') || 'nothing'}`);
    assert.ok(!first.files.some((x) => x.kind === 'wasm'), `${name}: the wasm module starts after the screen is interactive`);
    assert.ok(app.files.some((x) => x.kind === 'wasm'), `${name}: the app needs the wasm module`);
    assert.ok(!app.files.some((x) => x.file.includes('/editor-bundle/')),
      `${name}: the CodeMirror bundle is not fetched before the app is drawn`);
    assert.ok(first.total_gzip <= BUDGET_BYTES, `${name}: ${first.total_gzip} bytes gzip before interactive (budget ${BUDGET_BYTES})`);
    assert.ok(app.total_gzip <= READY_BOUND_BYTES, `${name}: the app's load grew to ${app.total_gzip} bytes gzip (bound ${READY_BOUND_BYTES})`);
  }
  assert.ok(report['scenario link'].interactive.files.some((x) => x.file === '/first/rapid-edits.html'),
    'a scenario link fetches its pre-drawn screen');
  await mkdir(SHOTS, { recursive: true });
  await writeFile(join(SHOTS, 'first-load.json'), JSON.stringify(report, null, 2));
});

test('a gallery link shows its scenario pre-drawn, and what is pressed runs once the app is there', { timeout: 120_000 }, async () => {
  const { page, context, problems, release } = await openHeld(`${server.url}?scenario=rapid-edits`);
  await page.locator('[data-snapshot] #steps').waitFor();
  await page.waitForFunction(() => performance.getEntriesByName('converge-interactive').length > 0);
  const lesson = await page.locator('[data-snapshot] #lesson-h').textContent();
  assert.ok(lesson.length > 0, 'the lesson panel is drawn');
  const before = Number((await page.locator('#steps').textContent()).split(' ')[0]);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  release();
  await appReady(page);
  await page.locator('#steps', { hasText: `${before + 1} steps` }).waitFor();
  assert.equal(await page.locator('#lesson-h').textContent(), lesson, 'the app shows the same lesson');
  assert.deepEqual(problems, []);
  await context.close();
});

test('before the wasm arrives, the pre-drawn playground shows the starter and keeps what the person does', { timeout: 120_000 }, async () => {
  const { page, context, problems, release } = await openHeld(server.url);
  const step = page.getByRole('button', { name: 'Step', exact: true });
  await step.waitFor();
  await page.waitForFunction(() => performance.getEntriesByName('converge-interactive').length > 0);
  assert.equal(await page.locator('[data-snapshot]').count(), 1, 'the copy is shown');
  const steps = async () => Number((await page.locator('#steps').textContent()).split(' ')[0]);
  const stepsAre = (n) => page.locator('#steps', { hasText: new RegExp(`^${n} steps$`) }).waitFor();
  const before = await steps(); // the starter's creation steps
  assert.match(await page.locator('.objects').textContent(), /Deployment/);

  // In order: a shortcut with nothing focused, a button, a select, an edit applied with
  // Ctrl+Enter, and a row of the tree.
  await page.keyboard.press('n');
  await step.click();
  await page.locator('#speed').selectOption({ label: '4x' });
  const editor = page.locator('textarea#spec-editor');
  const text = await editor.inputValue();
  assert.match(text, /"replicas": 3,/);
  await editor.fill(text.replace('"replicas": 3,', '"replicas": 4,'));
  await editor.press('Control+Enter');
  const pod = page.locator('.object-list button.object', { hasText: 'Pod' }).first();
  const podName = (await pod.textContent()).match(/web-[a-z0-9]+-[a-z0-9]+/)[0];
  await pod.click();
  const waiting = page.getByRole('status').filter({ hasText: 'Starting the simulator' });
  assert.equal(await waiting.textContent(), 'Starting the simulator: 6 actions wait for it.');
  assert.equal(await page.locator('[data-snapshot] .boot-pending').count(), 4, 'each pressed control shows it waits');
  await screenshot(page, 'first-load-waiting');
  assert.equal(await steps(), before, 'nothing runs before the app');

  release();
  await appReady(page);
  await stepsAre(before + 3); // two Steps, and the Apply, a step of its own
  assert.equal(await page.locator('[data-snapshot]').count(), 0, 'the copy is gone');
  assert.equal(await step.count(), 1, 'one playground on the page');
  assert.equal(await page.locator('#speed').inputValue(), String(4), 'the speed chosen before the app is kept');
  // The row pressed before the app is the one selected, though the steps replayed before it.
  await page.getByText(`pods default/${podName}`, { exact: true }).waitFor();
  await waiting.waitFor({ state: 'detached' });
  // The edit was applied as alice: the Deployment's generation is 2.
  await page.locator('.object-list button.object', { hasText: 'Deployment' }).click();
  await page.locator('#generation', { hasText: /^2$/ }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('each pre-drawn screen is exactly what the app draws first', { timeout: 120_000 }, async () => {
  const index = await readFile(join(DIST, 'index.html'), 'utf8');
  const copies = [
    ['', index.match(/<!-- snapshot -->([^]*?)<!-- \/snapshot -->/)?.[1]],
    ['?scenario=rapid-edits', await readFile(join(DIST, 'first', 'rapid-edits.html'), 'utf8')],
  ];
  for (const [query, copy] of copies) {
    assert.ok(copy, `a copy for "${query}"`);
    const { page, context, problems } = await openPage(browser, `${server.url}${query}`, {
      beforeGoto: (p) => p.route('**/editor-bundle/**', () => {}), // as the copy was taken
    });
    const live = await page.evaluate(screenMarkup);
    const claimed = copy.trim().replace(/^<div class="shell boot-unclaimed" data-snapshot="[^"]+" inert=""/, '<div class="shell"');
    assert.equal(claimed, live, `the copy for "${query}" is the app's screen`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

/** Loads `url` in `page` with the wasm held back; resolves to the function that releases it. */
async function gotoHeld(page, url) {
  const release = await holdWasm(page);
  await page.goto(url);
  return release;
}

test('a saved workspace or a share link never shows the starter copy', { timeout: 120_000 }, async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  const before = await page.locator('#steps').textContent();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.locator('#steps', { hasText: before }).waitFor({ state: 'detached' });
  const after = await page.locator('#steps').textContent();
  await page.getByRole('button', { name: 'Share' }).click();
  await page.waitForFunction(() => location.hash.startsWith('#w1.'));
  const link = page.url();
  await page.evaluate(() => dispatchEvent(new Event('pagehide'))); // saves now

  const saved = await context.newPage(); // same storage: the saved workspace
  const linked = (await browser.newContext()).newPage(); // no storage, the link
  for (const [p, url] of [[saved, server.url], [await linked, link]]) {
    const release = await gotoHeld(p, url);
    // boot.js has run: the copy (the starter's first screen) is gone and the page waits for the app.
    await p.waitForFunction(() => performance.getEntriesByName('converge-ready').length === 0
      && document.querySelector('[data-snapshot]') === null && document.readyState !== 'loading');
    assert.equal(await p.locator('#steps').count(), 0, `${url}: no playground before the app`);
    assert.equal(await p.locator('.boot-loading').textContent(), 'Starting the simulator…');
    release();
    await appReady(p);
    await p.locator('#steps', { hasText: new RegExp(`^${after}$`) }).waitFor();
  }
  await (await linked).context().close();
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the wasm cannot be fetched, the pre-drawn page says so and stays readable', { timeout: 120_000 }, async () => {
  const { page, context } = await openPage(browser, server.url, {
    ready: false,
    beforeGoto: (p) => p.route('**/*_bg.wasm', (route) => route.abort()),
  });
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /^The simulator could not start \(.+\)\. Reload the page to try again\.$/);
  assert.equal(await page.locator('[data-snapshot] #steps').count(), 1, 'the copy is still there to read');
  // It no longer pretends: nothing in it can be pressed, and no line says an action waits.
  await page.locator('[data-snapshot] #step').click({ force: true });
  assert.equal(await page.locator('.boot-pending').count(), 0);
  assert.equal(await page.locator('.boot-status[role=status]').count(), 0);
  await context.close();
});

test('a gallery copy drawn by another build (a cache) is not shown', { timeout: 120_000 }, async () => {
  const stale = (await readFile(join(DIST, 'first', 'rapid-edits.html'), 'utf8'))
    .replace(/data-snapshot="[^"]+"/, 'data-snapshot="converge-web-0000000000000000_bg.wasm"');
  const { page, context, problems, release } = await openHeld(`${server.url}?scenario=rapid-edits`,
    (p) => p.route('**/first/rapid-edits.html', (route) => route.fulfill({ body: stale, contentType: 'text/html' })));
  await page.locator('.boot-loading').waitFor();
  assert.equal(await page.locator('[data-snapshot]').count(), 0, 'no copy from another build');
  release();
  await appReady(page);
  await page.locator('#lesson-h').waitFor();
  assert.equal(await page.locator('.boot-loading').count(), 0, 'the loading line goes with the app');
  assert.deepEqual(problems, []);
  await context.close();
});
