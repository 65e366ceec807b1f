// Issue 20's browser figures, measured as a person meets them in the release build:
// - how long the 1,000-object starter (`?starter=large`) takes to appear, against the small
//   starter in the same browser (the large one loads the second module and the checkpoint the
//   build ships, web/starter-checkpoint.mjs; the difference is that download, the world read
//   back and its first render), and after its module started;
// - a rolling update of its 960 Pods: the image retyped in CodeMirror, Apply, then "Run until
//   converged", timed by the app's own `converge-step` measure (reducer to patched DOM);
// - the wasm linear memory holding that world (CDP `Runtime.queryObjects` on
//   WebAssembly.Memory).
// The guards are generous (regressions only); the figures go to target/e2e/engine.json for
// BENCHMARKS.md ("Engine at scale").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, openPage, applyNewImage, wasmMemory, SHOTS } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

// Regression guards, about three times what this machine measured (BENCHMARKS.md).
const LARGE_EXTRA_MS = 15_000;
const ROLLING_UPDATE_MS = 20_000;
// Issue 20's goal, 64 MB of wasm memory with the large starter, is the guard: 60.0 MB read back
// from the shipped checkpoint (this page's path), 62.8 MB when a page replays it instead
// (BENCHMARKS.md, session 23). The same build makes the same allocations on every run.
const LARGE_MEMORY_BYTES = 64_000_000;
const AFTER_ROLLOUT_MEMORY_BYTES = 400 * 1024 * 1024;

async function readyMs(page) {
  await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0,
    null, { timeout: 180_000 });
  return page.evaluate(() => performance.getEntriesByName('converge-ready')[0].startTime);
}

/** From the module's start (web/boot.js `converge-module`) to `converge-ready`. */
function afterModuleMs(page) {
  return page.evaluate(() => performance.getEntriesByName('converge-ready')[0].startTime
    - performance.getEntriesByName('converge-module')[0].startTime);
}

test('the 1,000-object starter appears, rolls out a new image and fits in wasm memory',
  { timeout: 600_000 }, async () => {
    const small = await openPage(browser, server.url);
    const smallReady = await readyMs(small.page);
    const smallMemory = await wasmMemory(small.context, small.page);
    assert.deepEqual(small.problems, []);
    await small.context.close();

    const { page, context, problems } = await openPage(browser, `${server.url}?starter=large`);
    const largeReady = await readyMs(page);
    const largeAfterModule = await afterModuleMs(page);
    await page.waitForFunction(() => parseInt(document.querySelector('.objects .muted')?.textContent ?? '0', 10) >= 950,
      null, { timeout: 180_000 });
    const objects = parseInt(await page.locator('.objects .muted').innerText(), 10);
    const largeMemory = await wasmMemory(context, page);

    await applyNewImage(page);
    const before = await page.evaluate(() => performance.getEntriesByName('converge-step').length);
    await page.getByRole('button', { name: 'Run until converged' }).click();
    await page.waitForFunction((n) => performance.getEntriesByName('converge-step').length > n, before,
      { timeout: 300_000 });
    const rollingMs = await page.evaluate(() => performance.getEntriesByName('converge-step').at(-1).duration);
    // What a person sees afterwards: every replica updated, in the Deployment's status.
    const updated = page.locator('tr[data-field="/updatedReplicas"]');
    await updated.waitFor();
    assert.match(await updated.innerText(), /\b960\b/);
    const afterMemory = await wasmMemory(context, page);
    assert.deepEqual(problems, []);
    await context.close();

    const report = {
      small_ready_ms: smallReady,
      large_ready_ms: largeReady,
      large_extra_ms: largeReady - smallReady,
      large_after_module_ms: largeAfterModule,
      objects,
      rolling_update_960_pods_ms: rollingMs,
      wasm_memory_bytes: { small: smallMemory, large: largeMemory, after_rolling_update: afterMemory },
    };
    console.log(`engine in the browser: ${JSON.stringify(report)}`);
    await mkdir(SHOTS, { recursive: true });
    await writeFile(join(SHOTS, 'engine.json'), JSON.stringify(report, null, 2));
    assert.ok(objects >= 950, `the large starter shows ${objects} objects`);
    assert.ok(largeReady - smallReady <= LARGE_EXTRA_MS,
      `the large starter took ${largeReady - smallReady} ms longer than the small one (guard ${LARGE_EXTRA_MS})`);
    assert.ok(rollingMs <= ROLLING_UPDATE_MS, `rolling update took ${rollingMs} ms (guard ${ROLLING_UPDATE_MS})`);
    assert.ok(Math.max(...largeMemory) <= LARGE_MEMORY_BYTES, `wasm memory with the large starter ${largeMemory}`);
    assert.ok(Math.max(...afterMemory) <= AFTER_ROLLOUT_MEMORY_BYTES, `wasm memory after the rolling update ${afterMemory}`);
  });
