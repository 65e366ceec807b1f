// Issue 20's checkpoints of the world, as a person meets them in the release build:
// - a first visit of the large starter opens from the checkpoint the build ships
//   (web/starter-checkpoint.mjs), or, when that file is late or missing, from the replay it
//   stands in for, and its reload keeps what was done;
// - a long session reloads from the checkpoint a Web Worker kept in IndexedDB
//   (web/checkpoint.js), or, when that checkpoint is damaged, from the replay of its actions.
// Either way the page shows the same cluster. The times go to target/e2e/checkpoint*.json for
// BENCHMARKS.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, openPage, appReady, screenshot, wasmMemory, SHOTS } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

/** What a person reads off the page about the cluster. */
async function seen(page) {
  return {
    steps: await page.locator('#steps').innerText(),
    objects: await page.locator('.objects .muted').innerText(),
    status: await page.locator('tr[data-field="/availableReplicas"]').innerText(),
  };
}

/**
 * The cluster as both first visits of the large starter show it: the steps, the objects and the
 * Deployment's available replicas (without the "changed" mark, which the replay sets against
 * the step before and a checkpoint has no step before to set it against).
 */
async function cluster(page) {
  const { steps, objects } = await seen(page);
  const available = await page.locator('tr[data-field="/availableReplicas"]')
    .evaluate((row) => row.querySelectorAll('td, th')[1].firstChild.textContent);
  return { steps, objects, available };
}

/**
 * Navigates to the playground and answers when `converge-ready` came, in ms from navigation
 * and from the module's start (web/boot.js `converge-module`).
 */
async function reload(page, url) {
  await page.goto(url);
  return timed(page);
}

/** When `converge-ready` came, as [`reload`] answers it, for a page already navigating. */
async function timed(page) {
  await appReady(page);
  await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0);
  return page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name)[0].startTime;
    return { ready: at('converge-ready'), after_module: at('converge-ready') - at('converge-module') };
  });
}

// A regression guard, about three times what this machine measured (BENCHMARKS.md).
const FROM_CHECKPOINT_MS = 3_000;
// Issue 20's goal for the wasm memory with the large starter, 64 MB: 60.0 MB from a checkpoint
// since its objects are read at their length (70.2 MB before), 62.8 MB replayed since a Pod's
// status is stored compact (65.7 MB before; BENCHMARKS.md, session 23). The memory is the same
// from run to run: the same build makes the same allocations.
const MEMORY_BYTES = 64_000_000;

const NOTICE = /Reloaded from this browser's checkpoint of the session at step \d+/;
const SHIPPED = /Opened the large starter from the checkpoint this version ships at step \d+/;
const RESTORED = /Step \d+ was read back from a checkpoint, so its requests and watch events were not kept/;

test('a first visit of the large starter opens from the checkpoint the build ships, and replays when it does not come',
  { timeout: 600_000 }, async () => {
    const { page, context, problems } = await openPage(browser, `${server.url}?starter=large`, { ready: false });
    const shipped = await timed(page);
    await page.getByText(SHIPPED).waitFor();
    const opened = await cluster(page);
    assert.match(opened.objects, /^9[5-9]\d|^\d{4,}/);
    assert.equal(opened.available, '960');
    // The address no longer asks for a fresh one: a reload opens the session as it is saved.
    assert.equal(new URL(page.url()).search, '');
    // The timeline says why it has no requests to show for the step it starts at.
    await page.getByText(RESTORED).waitFor();
    const memory = await wasmMemory(context, page);

    // The same visit with the checkpoint held back by the network until the page is ready: none
    // of it has come when boot.js judges its download (as on a slow link), so the first module
    // replays the starter from its seed, with no notice.
    let release;
    const held = new Promise((ok) => { release = ok; });
    const modules = [];
    const late = await openPage(browser, `${server.url}?starter=large`, {
      ready: false,
      beforeGoto: async (p) => {
        p.on('request', (r) => { if (r.url().endsWith('.wasm')) modules.push(new URL(r.url()).pathname); });
        await p.route(/starter-large-[0-9a-f]+\.bin$/, async (route) => {
          await held;
          await route.abort().catch(() => {}); // the page may be gone by then
        });
      },
    });
    const replayed = await timed(late.page);
    release();
    assert.deepEqual(modules.map((m) => /converge-web-terminal-/.test(m)), [false], modules.join(', '));
    assert.deepEqual(await cluster(late.page), opened);
    assert.equal(await late.page.getByText(SHIPPED).count(), 0);
    assert.equal(await late.page.getByText(RESTORED).count(), 0);
    // The replayed world fits the same goal.
    const replayedMemory = await wasmMemory(late.context, late.page);
    await late.page.locator('#sequence svg').waitFor();
    // Acting on either goes on alike: the timeline's next step.
    const stepped = [];
    for (const p of [page, late.page]) {
      await p.getByRole('button', { name: 'Step', exact: true }).click();
      await p.locator('#steps', { hasText: opened.steps }).waitFor({ state: 'detached' });
      stepped.push(await seen(p));
    }
    assert.deepEqual(stepped[0], stepped[1]);
    assert.equal(await page.getByText(RESTORED).count(), 0);
    // The reload keeps the step: from the shipped checkpoint again, or from the one this
    // browser's worker has kept by then, and the step after it.
    await page.reload();
    await timed(page);
    assert.deepEqual(await seen(page), stepped[0]);
    await page.getByText(new RegExp(`${SHIPPED.source}|${NOTICE.source}`)).waitFor();
    assert.deepEqual(problems, []);
    assert.deepEqual(late.problems.filter((p) => !/Failed to load resource|ERR_FAILED/.test(p)), []);
    await context.close();
    await late.context.close();

    // A host that left the checkpoint out (its address answers 404): the first module replays
    // at once, with no notice.
    const asked = [];
    const missing = await openPage(browser, `${server.url}?starter=large`, {
      ready: false,
      beforeGoto: async (p) => {
        p.on('request', (r) => { if (r.url().endsWith('.wasm')) asked.push(new URL(r.url()).pathname); });
        await p.route(/starter-large-[0-9a-f]+\.bin$/, (route) => route.fulfill({ status: 404, body: 'Not Found' }));
      },
    });
    await timed(missing.page);
    assert.deepEqual(asked.map((m) => /converge-web-terminal-/.test(m)), [false], asked.join(', '));
    assert.deepEqual(await cluster(missing.page), opened);
    assert.equal(await missing.page.getByText(SHIPPED).count(), 0);
    assert.deepEqual(missing.problems.filter((p) => !/Failed to load resource|404/.test(p)), []);
    await missing.context.close();

    // The notice as a phone shows it, in the dark theme.
    const phone = await openPage(browser, `${server.url}?starter=large`,
      { colorScheme: 'dark', viewport: { width: 390, height: 844 } });
    await phone.page.getByText(SHIPPED).waitFor();
    await screenshot(phone.page, 'starter-checkpoint-phone-dark');
    await phone.context.close();

    const report = {
      shipped_ms: shipped,
      replayed_ms: replayed,
      wasm_memory_bytes_shipped: memory,
      wasm_memory_bytes_replayed: replayedMemory,
    };
    console.log(`the large starter's first visit: ${JSON.stringify(report)}`);
    await mkdir(SHOTS, { recursive: true });
    await writeFile(join(SHOTS, 'checkpoint-first-visit.json'), JSON.stringify(report, null, 2));
    assert.ok(shipped.after_module < replayed.after_module,
      `from the shipped checkpoint (${shipped.after_module} ms after the module) is faster than the replay (${replayed.after_module} ms)`);
    assert.ok(Math.max(...memory) <= MEMORY_BYTES, `wasm memory after the shipped checkpoint ${memory}`);
    assert.ok(Math.max(...replayedMemory) <= MEMORY_BYTES, `wasm memory after the replay ${replayedMemory}`);
    assert.ok(shipped.after_module <= FROM_CHECKPOINT_MS,
      `the shipped checkpoint took ${shipped.after_module} ms after the module (guard ${FROM_CHECKPOINT_MS})`);
  });

test('a long session reloads from its checkpoint, and from the seed when that is damaged',
  { timeout: 600_000 }, async () => {
    const { page, context, problems } = await openPage(browser, `${server.url}?starter=large`);
    await page.locator('.objects .muted', { hasText: /^9[5-9]\d|^\d{4,}/ }).waitFor({ timeout: 180_000 });
    // A person's action saves the session, which is long enough for a checkpoint.
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.locator('#steps', { hasText: /[1-9]\d* steps/ }).waitFor();
    await page.waitForFunction(() => localStorage.getItem('converge.checkpoint') !== null, null,
      { timeout: 300_000 });
    const before = await seen(page);

    // The reload: the second module, the world read back from IndexedDB.
    const fromCheckpoint = await reload(page, server.url);
    await page.getByText(NOTICE).waitFor();
    assert.deepEqual(await seen(page), before);
    await screenshot(page, 'checkpoint-reloaded');

    const memory = await wasmMemory(context, page);

    // Acting on it goes on as on the session it was saved from: one more step. The page's
    // worker goes on from the stored checkpoint, whose cut this step does not move: nothing new
    // is stored.
    const answered = page.evaluate(() => new Promise((ok) => addEventListener('converge-checkpoint',
      (e) => ok(e.detail), { once: true })));
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.locator('#steps', { hasText: before.steps }).waitFor({ state: 'detached' });
    const stepped = await seen(page);
    const reply = await answered;
    assert.equal(reply.error, undefined);
    assert.equal(reply.wrote, false);

    // The same record with one byte of the world flipped: refused, and the session is
    // replayed from its seed instead, with the same cluster and no checkpoint notice.
    await page.evaluate(() => new Promise((ok, fail) => {
      const open = indexedDB.open('converge', 1);
      open.onerror = () => fail(open.error);
      open.onsuccess = () => {
        const db = open.result;
        const store = db.transaction('checkpoints', 'readwrite').objectStore('checkpoints');
        const get = store.get('session');
        get.onsuccess = () => {
          const record = get.result;
          record.bytes[record.bytes.length >> 1] ^= 0x40;
          const put = store.put(record, 'session');
          put.onsuccess = () => { db.close(); ok(); };
          put.onerror = () => fail(put.error);
        };
      };
    }));
    // The stored checkpoint is still of the session before the last step, so the reload
    // replays every action of it; the cluster is the one the page last showed.
    const fromSeed = await reload(page, server.url);
    assert.deepEqual(await seen(page), stepped);
    assert.equal(await page.getByText(NOTICE).count(), 0);
    // Of no use again, it is forgotten.
    await page.waitForFunction(() => localStorage.getItem('converge.checkpoint') === null);
    assert.deepEqual(problems, []);
    await context.close();

    const report = {
      reload_from_checkpoint_ms: fromCheckpoint,
      reload_from_seed_ms: fromSeed,
      wasm_memory_bytes_from_checkpoint: memory,
    };
    const [checkpointed, replayed] = [fromCheckpoint.after_module, fromSeed.after_module];
    console.log(`checkpoint in the browser: ${JSON.stringify(report)}`);
    await mkdir(SHOTS, { recursive: true });
    await writeFile(join(SHOTS, 'checkpoint.json'), JSON.stringify(report, null, 2));
    // Issue 20's goal for the large world: on the page within a second of the module.
    assert.ok(checkpointed < replayed,
      `the reload from the checkpoint (${checkpointed} ms after the module) is faster than the replay (${replayed} ms)`);
    assert.ok(Math.max(...memory) <= MEMORY_BYTES, `wasm memory after the reload from the checkpoint ${memory}`);
    assert.ok(checkpointed <= FROM_CHECKPOINT_MS,
      `the reload from the checkpoint took ${checkpointed} ms after the module (guard ${FROM_CHECKPOINT_MS})`);
  });
