// First load (issue 15), measured as people get it: the release dist/ served with the rules of
// `./dev preview` (web/preview.mjs: brotli, cache headers), in headless Chromium with CDP network
// emulation (`Network.emulateNetworkConditions`) and a cold cache. Times come from the
// Performance API: `first-contentful-paint`, and `converge-ready`, the mark the app sets at the
// end of its first render, from which a Step takes effect. A repeat visit in the same browser is
// served by the service worker (web/sw.js); the server's log shows what it fetched again.
// Each profile is loaded RUNS times and the best run is held to the budget, so a busy machine (CI,
// another build) does not fail it while a slower page still does; every run goes to
// target/e2e/first-load.json for BENCHMARKS.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, openPage, appReady, screenshot, SHOTS } from './harness.mjs';
import { HASHED } from '../../web/preview.mjs';

const PROFILES = [
  // Issue 15's 1,200 ms is at its edge since session 11: best of 3 was 1,129, 1,143, 1,148 and
  // 1,241 ms in four runs of the same tree. Reported as OVER when missed. Session 15 (686,487 B):
  // 1,198-1,392 ms in five runs of two trees whose wasm differs by 417 B, the worst 8 ms from the
  // old 1,400 bound, so the run now fails past 1,600. Session 16's slower host: 1,465-1,525 ms
  // at 690,069-690,498 B in three runs, and 1,775 ms for the unchanged page (428cfe5, 686,487 B)
  // in a slow minute, so the bound is 1,900.
  { name: '9 Mbit/s, 60 ms', down: 9e6 / 8, up: 1.5e6 / 8, latency: 60, fcp: 500, ready: 1200, readyBound: 1900 },
  // Issue 15's 4,000 ms is not met since session 11 (4,107 ms best of 3 at 674,515 B: provenance
  // recording and the StatefulSet and EndpointSlice controllers are in the first load;
  // BENCHMARKS.md, "First load"). Until it is met again, growth past `readyBound` fails the run.
  // Session 15: 4,147-4,310 ms best of 3 in five runs at 686,487-686,916 B; a fresh-clone
  // .ci/run failed the old 4,300 bound by 9.5 ms with no change to the first load (the wasm 417 B
  // smaller than its parent's). At the 690,000 B bytes bound the transfer alone is 3,450 ms at
  // this speed and the rest measured 720-880 ms, so the bound is 4,500: the bytes bound guards
  // growth, this one a slower start. Session 16's slower host: 4,335 and 4,354 ms at 690,069 B,
  // 150 ms from that bound, where the fast profile's unchanged page ran 20% slower in a slow
  // minute; at the 694,000 B bytes bound the transfer is 3,470 ms, so the bound is 4,800.
  { name: '1.6 Mbit/s, 150 ms', down: 1.6e6 / 8, up: 750e3 / 8, latency: 150, fcp: 1000, ready: 4000, readyBound: 4800 },
];
// The repeat visit's budget. Session 16's host ran slower than earlier sessions' (the same
// engine binary took about 40% more CPU, BENCHMARKS.md "Session 16"): an unchanged page (main
// at 428cfe5) gave 343 ms best of 3, and 340 ms in a fresh-clone .ci/run. Reported as OVER when
// missed; the run fails past the bound.
const WARM_READY_MS = 300;
const WARM_READY_BOUND = 450;
const RUNS = 3;
// Issue 15's budget for what is fetched before `converge-ready` (wasm, JS, CSS, HTML), brotli.
// Not met: the wasm alone is over it (BENCHMARKS.md, "where the bytes go"). Until it is, growth
// past this bound fails the run: on 2026-12-01 it was 536,560 B, and 557,396 B once session 8's
// Events (the correlator, five controllers' recorders, the Events table), aggregated discovery
// and the scenario language's selections were merged in, and 608,455 B once session 10's Job and
// DaemonSet controllers, their kinds and tables, the scheduler's filters, the pod GC and
// readiness probes were (the ready times stayed within their budgets: 1,081 and 3,719 ms), and
// 637,303 B once the EndpointSlice kind and controller and the readiness lesson were (ready
// 1,115 and 3,884 ms), and 654,754 B with main's StatefulSet controller beside them (ready
// 1,140 and 3,979 ms: the slow profile 21 ms inside its budget).
// Session 11: 674,515 B with the StatefulSet and EndpointSlice controllers and provenance.
// Session 16: 686,487 B at 428cfe5, 690,069 B with issue 20's interned GroupResource and member
// reads (13.6% fewer engine instructions, 1.3 MB less wasm memory with the large starter; which
// functions the 3,582 B are was not measured); the bound moved from 690,000 to 694,000 for them.
// Session 24: 693,334 B before, about 694,900 B with issue 20's JSON value of the project's own
// (shared copy-on-write objects, inline keys: 1 -> 10,000 Pods in 11 s and 547 MB instead of 16 s
// and 756 MB natively); the first module grew 1.5 KiB brotli, and the bound moved to 696,000.
// Session 28: 695,093 B before, 695,872 B with issue 20's pointer and key searches a word at a
// time, texts written only when read and the authorization memo (18% fewer engine
// instructions at 1,000 Pods), and 696,465 B in CI after a change of doc comments and tests
// only (the bytes move by a few hundred with no change to the code); the bound moved to 697,000.
// Session 29: 696,465 B before, 697,082-697,114 B with issue 20's stored maps holding their keys
// apart and shared (peak RSS at 10,000 Pods 298 -> 245 MB with the Events' changes); the
// iterators' `next` kept out of line in wasm took back 680 B of the 1,300 B it first added, and
// 697,570 B at the session's last commit. CI has measured up to 600 B more than this machine
// for the same code, so the bound moved to 698,500.
// Session 32: 695,005 B before, 697,214 B with stored maps as one allocation and every level
// of a stored object stored, 699,105 B with the review's fixes (peak RSS at 10,000 Pods 217.5
// -> 170.5 MB natively, the tab's wasm memory after the rolling update 72.0 -> 67.0 MB). Two
// builds of nearly the same code measured 699,105 and 699,628 B (a copy where a move had been:
// the bytes move by hundreds with the code's layout), so the bound moved to 700,500.
// Session 35: 700,165 B in CI before, 701,775 B with the world's objects read from the API
// server's store in place of a second map kept in step (2.9% fewer engine instructions at
// 10,000 Pods, 2.2% in the 1,000-Pod rolling update, 0.8 MB less wasm memory after the tab's
// rolling update); a function-by-function count put the 4.7 KB of code it adds in small growths
// across the largest functions, not in one place that could be kept out of line. The bound
// moved to 702,000.
const BYTES_BUDGET = 400_000;
const BYTES_BOUND = 702_000;

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const marks = (page) => page.evaluate(() => {
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const ready = at('converge-ready');
  const nav = performance.getEntriesByType('navigation')[0];
  const early = performance.getEntriesByType('resource').filter((e) => e.startTime < ready);
  return {
    fcp: at('first-contentful-paint'),
    ready,
    // Bytes as sent (compressed), before the mark: the page and what it started to fetch.
    bytes: nav.encodedBodySize + early.reduce((t, e) => t + e.encodedBodySize, 0),
    files: [[new URL(nav.name).pathname, nav.encodedBodySize],
      ...early.map((e) => [new URL(e.name).pathname, e.encodedBodySize])],
  };
});

/** One cold visit on `profile`, then a repeat visit in the same browser. */
async function visit(profile) {
  const { page, context, problems } = await openPage(browser, server.url, {
    ready: false,
    serviceWorkers: 'allow',
    beforeGoto: async (p) => {
      const cdp = await p.context().newCDPSession(p);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false, latency: profile.latency, downloadThroughput: profile.down, uploadThroughput: profile.up,
      });
    },
  });
  await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null, { timeout: 60_000 });
  const cold = await marks(page);
  // The worker has taken this build in (once the editor bundle is loaded) and controls the page.
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 60_000 });
  const from = server.requests.length;
  await page.reload();
  await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null, { timeout: 60_000 });
  const warm = await marks(page);
  const again = server.requests.slice(from).filter((r) => HASHED.test(r.path));
  assert.deepEqual(problems, []);
  await context.close();
  return { cold, warm: { ready: warm.ready, hashed_refetched: again } };
}

test('first contentful paint and a working Step within the budgets, cold and warm', { timeout: 300_000 }, async () => {
  const report = { runs: RUNS, budgets: { profiles: PROFILES, warm_ready_ms: WARM_READY_MS, warm_ready_bound_ms: WARM_READY_BOUND } };
  const refetched = {};
  for (const profile of PROFILES) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await visit(profile));
    const best = (f) => Math.min(...runs.map(f));
    const row = {
      fcp_ms: best((r) => r.cold.fcp),
      ready_ms: best((r) => r.cold.ready),
      warm_ready_ms: best((r) => r.warm.ready),
      runs: runs.map((r) => ({ fcp: r.cold.fcp, ready: r.cold.ready, warm_ready: r.warm.ready })),
      bytes_before_ready: runs[0].cold.bytes,
      files: runs[0].cold.files,
    };
    report[profile.name] = row;
    refetched[profile.name] = runs.map((r) => r.warm.hashed_refetched);
    console.log(`first load (${profile.name}): FCP ${row.fcp_ms.toFixed(0)} ms (budget ${profile.fcp}), ` +
      `converge-ready ${row.ready_ms.toFixed(0)} ms (budget ${profile.ready}), repeat visit ` +
      `${row.warm_ready_ms.toFixed(0)} ms (budget ${WARM_READY_MS}); ${row.bytes_before_ready} bytes before ready; ` +
      `runs ${JSON.stringify(row.runs.map((r) => [r.fcp, r.ready, r.warm_ready].map(Math.round)))}`);
  }
  const bytes = report[PROFILES[0].name].bytes_before_ready;
  report.bytes_before_ready = { brotli: bytes, budget: BYTES_BUDGET, bound: BYTES_BOUND };
  console.log(`first load: ${bytes} bytes (brotli, as sent) before converge-ready: ` +
    `${bytes <= BYTES_BUDGET ? 'within' : 'OVER'} the budget of ${BYTES_BUDGET}`);
  await mkdir(SHOTS, { recursive: true });
  await writeFile(join(SHOTS, 'first-load.json'), JSON.stringify(report, null, 2));
  // Every profile is measured and reported before any bound is checked, so a failed run still
  // shows all of its figures.
  for (const profile of PROFILES) {
    const row = report[profile.name];
    for (const again of refetched[profile.name]) assert.deepEqual(again, [], 'a repeat visit fetches no hashed file again');
    assert.ok(row.fcp_ms <= profile.fcp, `${profile.name}: first contentful paint ${row.fcp_ms} ms`);
    if (profile.readyBound) {
      console.log(`first load (${profile.name}): converge-ready ${row.ready_ms <= profile.ready ? 'within' : 'OVER'} its budget of ${profile.ready} ms`);
      assert.ok(row.ready_ms <= profile.readyBound, `${profile.name}: converge-ready ${row.ready_ms} ms (bound ${profile.readyBound})`);
    } else {
      assert.ok(row.ready_ms <= profile.ready, `${profile.name}: converge-ready ${row.ready_ms} ms`);
    }
    console.log(`first load (${profile.name}): repeat visit ${row.warm_ready_ms <= WARM_READY_MS ? 'within' : 'OVER'} its budget of ${WARM_READY_MS} ms`);
    assert.ok(row.warm_ready_ms <= WARM_READY_BOUND, `${profile.name}: repeat visit converge-ready ${row.warm_ready_ms} ms (bound ${WARM_READY_BOUND})`);
  }
  assert.ok(report[PROFILES[0].name].files.some(([f]) => f.endsWith('_bg.wasm')), 'the app needs the wasm');
  assert.ok(!report[PROFILES[0].name].files.some(([f]) => f.includes('/editor-bundle/')),
    'the CodeMirror bundle is fetched after the app is drawn');
  assert.ok(bytes <= BYTES_BOUND, `the load before converge-ready grew to ${bytes} bytes brotli (bound ${BYTES_BOUND})`);
});

/** Opens `url` with the wasm held back; resolves with the function that lets it through. */
async function openHeld(url, options = {}) {
  let release;
  const held = new Promise((ok) => { release = ok; });
  const opened = await openPage(browser, url, {
    ...options,
    ready: false,
    beforeGoto: (p) => p.route('**/*_bg.wasm', async (route) => { await held; await route.continue(); }),
  });
  return { ...opened, release };
}

test('until the app is drawn, the page shows the playground frame with its controls disabled', { timeout: 120_000 }, async () => {
  for (const [name, options] of [['light', {}], ['dark', { colorScheme: 'dark' }], ['phone', { viewport: { width: 390, height: 844 } }]]) {
    const { page, context, problems, release } = await openHeld(server.url, options);
    const waiting = page.getByRole('status').filter({ hasText: 'Starting the simulator…' });
    await waiting.waitFor();
    const step = page.getByRole('button', { name: 'Step', exact: true });
    assert.ok(await step.isDisabled(), 'Step is visibly refused until the app is there');
    assert.equal(await page.getByRole('heading', { name: 'Converge', level: 1 }).count(), 1);
    await screenshot(page, `first-load-skeleton-${name}`);
    release();
    await appReady(page);
    await waiting.waitFor({ state: 'detached' });
    assert.equal(await page.locator('.boot-skeleton').count(), 0, 'the frame is gone');
    assert.equal(await step.count(), 1, 'one playground on the page');
    assert.ok(await step.isEnabled());
    const before = await page.locator('#steps').textContent();
    await step.click();
    await page.locator('#steps', { hasText: before }).waitFor({ state: 'detached' });
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('a saved workspace and a share link start the same way, and open their session', { timeout: 120_000 }, async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  const before = await page.locator('#steps').textContent();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.locator('#steps', { hasText: before }).waitFor({ state: 'detached' });
  const after = await page.locator('#steps').textContent();
  await page.getByRole('button', { name: 'Share' }).click();
  await page.waitForFunction(() => location.hash.startsWith('#w1.'));
  const link = page.url();
  await page.evaluate(() => dispatchEvent(new Event('pagehide'))); // saves now
  const linked = await browser.newContext({ serviceWorkers: 'block' }); // no storage, the link
  for (const [p, url] of [[await context.newPage(), server.url], [await linked.newPage(), link]]) {
    await p.goto(url);
    await appReady(p);
    await p.locator('#steps', { hasText: new RegExp(`^${after}$`) }).waitFor();
    assert.equal(await p.locator('.boot-skeleton').count(), 0);
  }
  await linked.close();
  assert.deepEqual(problems, []);
  await context.close();
});

test('when the wasm cannot be fetched, the page says so', { timeout: 120_000 }, async () => {
  const { page, context } = await openPage(browser, server.url, {
    ready: false,
    beforeGoto: (p) => p.route('**/*_bg.wasm', (route) => route.abort()),
  });
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /^The simulator could not start \(.+\)\. Reload the page to try again\.$/);
  assert.equal(await page.getByText('Starting the simulator…').count(), 0, 'no line says it is still starting');
  assert.ok(await page.getByRole('button', { name: 'Step', exact: true }).isDisabled());
  await context.close();
});
