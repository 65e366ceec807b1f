// Embeds as a documentation page uses them: web/embed-demo.html holds two embeds that start
// from a poster (no wasm before a click), keep separate state, size themselves through height
// messages, and the page drives one of them through the documented message API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, screenshot } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };

/** The demo page's log of messages from the embeds, one JSON object per line. */
async function messages(page, frameId) {
  const log = await page.locator('#log').innerText();
  return log.split('\n').filter((l) => l.startsWith(`${frameId}: `)).map((l) => JSON.parse(l.slice(frameId.length + 2)));
}

/** Waits until the log shows a message from `frameId` matching `pattern` (a RegExp over its JSON). */
async function waitForMessage(page, frameId, pattern, what) {
  const line = new RegExp(`${frameId}: .*${pattern.source}`);
  await page.locator('#log').filter({ hasText: line }).waitFor(T).catch(async (e) => {
    assert.fail(`no message from ${frameId} where ${what}; log:\n${await page.locator('#log').innerText()}\n${e.message}`);
  });
}

test('two embeds: posters first, independent sessions, the host drives one by messages', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}embed-demo.html`, { ready: false }); // the apps are in frames
  const wasm = [];
  context.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(r.url()); });
  const a = page.frameLocator('#embed-a');
  const b = page.frameLocator('#embed-b');
  await a.getByRole('button', { name: /Start the simulation/ }).waitFor();
  await b.getByRole('button', { name: /Start the simulation/ }).waitFor();
  assert.match(await a.locator('#poster-title').innerText(), /paused controller/);
  assert.equal(wasm.length, 0, 'nothing heavy loads before a click');
  await screenshot(page, 'embed-demo-posters-light');

  // Before it starts, embed B answers commands with an error reply.
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await waitForMessage(page, 'embed-b', /"type":"error".*"error":"not started/, 'B is not started');

  // The reader starts embed A with a click; B stays a poster.
  await a.getByRole('button', { name: /Start the simulation/ }).click();
  await a.getByRole('heading', { name: 'observedGeneration', level: 2 }).waitFor(T);
  await waitForMessage(page, 'embed-a', /"type":"ready".*"scenario":"paused-controller"/, 'A is ready');
  assert.ok(await b.getByRole('button', { name: /Start the simulation/ }).isVisible());
  await page.waitForFunction(() => document.querySelector('#embed-a').style.height !== '', null, T);
  const heightA = await page.evaluate(() => parseInt(document.querySelector('#embed-a').style.height, 10));
  assert.ok(heightA > 300, `embed A sized itself from its height message (${heightA}px)`);
  assert.ok(await a.locator('#spec-editor').count() > 0, 'embed A is editable');
  // In the demo's column-wide frame the objects column keeps a kind on one line.
  const kindRects = await a.locator('.object-list .kind').first().evaluate((el) => el.getClientRects().length);
  assert.equal(kindRects, 1, 'the kind "Deployment" is not broken across lines');

  // The host starts embed B and drives it: Next event twice, then reads its state.
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await b.getByRole('heading', { name: 'Spec vs status', level: 2 }).waitFor(T);
  await waitForMessage(page, 'embed-b', /"type":"ready".*"scenario":"scale-up"/, 'B is ready');
  assert.equal(await b.locator('#spec-editor').count(), 0, 'readonly: no editor');
  for (let i = 0; i < 2; i += 1) {
    const before = await b.locator('#steps').innerText();
    await page.getByRole('button', { name: 'Next event', exact: true }).click();
    await b.locator('#steps').filter({ hasNotText: new RegExp(`^${before}$`) }).waitFor();
  }
  await page.getByRole('button', { name: 'Read state', exact: true }).click();
  await waitForMessage(page, 'embed-b', /"type":"state".*"timeMs":[1-9].*"requestId":5/, 'B reports its state');
  const state = (await messages(page, 'embed-b')).filter((m) => m.type === 'state').pop();
  assert.equal(state.embed, 'b');
  assert.equal(state.scenario, 'scale-up');
  assert.deepEqual(state.lesson, { title: 'Spec vs status', step: 1, steps: 3, finished: false, done: false });
  assert.equal(state.selected, 'deployments default/web');
  assert.equal(await a.locator('#clock').innerText(), 't=0.000s', 'embed A did not move');
  assert.equal(await b.locator('#clock').innerText(), `t=${(state.timeMs / 1000).toFixed(3)}s`);

  // Play, then pause, through the API.
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await b.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await b.getByRole('button', { name: 'Play', exact: true }).waitFor();

  // A malformed message gets an error reply naming the problem, with the request id.
  await page.getByRole('button', { name: 'Send a malformed message' }).click();
  await waitForMessage(page, 'embed-b', /"type":"error".*"requestId":\d+,"error":"unknown type \\"explode\\"/, 'B refuses the malformed message');
  await screenshot(page, 'embed-demo-started-light');

  // Storage is scoped per embed: each has its own key, and a reload restores B alone.
  const keys = await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('converge.embed.')).sort());
  assert.ok(keys.includes('converge.embed.b.scale-up'), JSON.stringify(keys));
  assert.ok(!keys.includes('converge.workspace'), 'embeds never write the playground\'s own key');
  const clockB = await b.locator('#clock').innerText();
  await page.reload();
  await b.getByRole('button', { name: /Start the simulation/ }).click();
  await a.getByRole('button', { name: /Start the simulation/ }).click();
  await b.getByRole('heading', { name: 'Spec vs status', level: 2 }).waitFor(T);
  await a.getByRole('heading', { name: 'observedGeneration', level: 2 }).waitFor(T);
  assert.equal(await b.locator('#clock').innerText(), clockB);
  assert.equal(await a.locator('#clock').innerText(), 't=0.000s');
  assert.deepEqual(problems, []);
  await context.close();
});

test('an embed follows its theme and step parameters and fits a phone', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?embed&id=x&scenario=rapid-edits&lesson&step=2&theme=dark`, {
    viewport: { width: 390, height: 700 }, plainEditor: true,
  });
  await page.getByRole('heading', { name: 'Convergence, not instant transition', level: 2 }).waitFor(T);
  assert.equal(await page.locator('#lesson-progress').innerText(), 'Step 2 of 3');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no horizontal scroll (overflow ${overflow}px)`);
  await screenshot(page, 'embed-dark-narrow');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a bad embed URL says which parameter is wrong', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?embed&theme=pink`);
  await page.getByText('The embed URL is not valid: theme "pink" is not light, dark or system.').waitFor(T);
  assert.deepEqual(problems, []);
  await context.close();
});
