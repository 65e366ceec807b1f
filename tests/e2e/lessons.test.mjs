// The gallery and a lesson as a reader meets them: open the gallery, open a lesson, follow its
// steps with the playground's own controls until the closing question, answer it, and see it
// done; bad scenario files are refused with their line.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, screenshot } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };
const text = (page, sel) => page.locator(sel).innerText();

/** Clicks a control once and waits for the step counter to move. */
async function press(page, id) {
  const before = await text(page, '#steps');
  await page.locator(id).click();
  await page.waitForFunction((b) => document.querySelector('#steps')?.textContent !== b, before);
}

/** Presses Next event until the lesson reaches `want` (e.g. "Step 2 of 3"), at most `max` times. */
async function nextEventUntil(page, want, max = 200) {
  for (let i = 0; i < max; i += 1) {
    if ((await text(page, '#lesson-progress')) === want) return;
    await press(page, '#next-event');
  }
  assert.fail(`the lesson never reached "${want}"; it shows "${await text(page, '#lesson-progress')}"`);
}

test('the gallery lists fourteen lessons; "observedGeneration" is walked from start to finish', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Open the gallery' }).click();
  const cards = page.locator('.cards > li');
  await cards.first().waitFor();
  assert.equal(await cards.count(), 14);
  assert.match(await cards.nth(0).innerText(), /1\. Spec vs status/);
  assert.match(await cards.nth(9).innerText(), /10\. Optimistic concurrency/);
  assert.match(await cards.nth(10).innerText(), /11\. A Job that gives up/);
  assert.match(await cards.nth(11).innerText(), /12\. One Pod per node/);
  assert.match(await cards.nth(12).innerText(), /13\. A partitioned rollout/);
  assert.match(await cards.nth(13).innerText(), /14\. Readiness takes a Pod out of its Service/);
  await screenshot(page, 'lessons-gallery-light');

  await page.getByRole('button', { name: 'Open lesson 6: observedGeneration' }).click();
  await page.getByRole('heading', { name: 'observedGeneration', level: 2 }).waitFor();
  assert.equal(new URL(page.url()).search, '?scenario=paused-controller');
  assert.equal(await text(page, '#clock'), 't=0.000s');
  assert.equal(await text(page, '#lesson-progress'), 'Step 1 of 3');
  assert.match(await text(page, '.step.current'), /Press Next event until alice scales web to 3 at 6s/);
  assert.match(await text(page, '.step.current'), /Continues when: deployments\/default\/web metadata.generation equals 2/);

  // Steps 1 and 2 hold together once alice's edit lands while the controller is paused.
  await nextEventUntil(page, 'Step 3 of 3');
  assert.equal(await text(page, '#generation'), '2');
  assert.equal(await text(page, '#observed-generation'), '1');
  assert.equal(await text(page, '#generation-badge'), 'stale');
  assert.equal(await page.locator('.step.done').count(), 2);
  await screenshot(page, 'lessons-stale-light');

  // Scrubbing the timeline back to the first step shows the lesson as it was then, not later.
  const scrubTo = (step) => page.locator('#scrub').evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, step);
  await scrubTo(1);
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'Step 1 of 3');
  assert.match(await text(page, '.step.current'), /Press Next event until alice scales web to 3 at 6s/);
  assert.equal(await page.locator('.step.done').count(), 0);
  await page.getByRole('button', { name: 'Live', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'Step 3 of 3');
  // Forking there continues the lesson from that moment: the same events complete it again.
  await scrubTo(1);
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'Step 1 of 3');
  await page.locator('#fork').click();
  assert.equal(await text(page, '#lesson-progress'), 'Step 1 of 3');
  await nextEventUntil(page, 'Step 3 of 3');

  // Step 3: Play past the resume at 15s until three replicas are ready.
  await page.getByLabel('Speed').selectOption({ label: 'max' });
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'All 3 steps done', null, T);
  if (await page.getByRole('button', { name: 'Pause', exact: true }).isVisible()) {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
  }
  assert.equal(await text(page, '#observed-generation'), '2');
  assert.equal(await text(page, '#generation-badge'), 'caught up');

  // The closing check: a wrong answer says so, the right one finishes the lesson.
  const check = page.getByRole('group', { name: /Can a client trust that web is scaled as asked/ });
  await check.getByLabel('yes, Available is True').check();
  await page.locator('#lesson-wrong').waitFor();
  await check.getByLabel(/no, observedGeneration \(1\) is behind generation \(2\)/).check();
  await page.locator('#lesson-done').waitFor();
  assert.match(await text(page, '#lesson-done'), /^✓ Done\. Compare observedGeneration with generation/);
  await screenshot(page, 'lessons-done-light');

  // A reload opens the same scenario and replays the reader's actions.
  const clock = await text(page, '#clock');
  await page.reload();
  await page.getByRole('heading', { name: 'observedGeneration', level: 2 }).waitFor();
  assert.equal(await text(page, '#clock'), clock);
  assert.equal(await text(page, '#lesson-progress'), 'All 3 steps done');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a lesson reads in the dark theme and at phone width', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=status-protection`, {
    colorScheme: 'dark', viewport: { width: 390, height: 844 }, plainEditor: true,
  });
  await page.getByRole('heading', { name: 'Status as a protected subresource', level: 2 }).waitFor();
  await nextEventUntil(page, 'Step 2 of 3');
  assert.match(await text(page, '.step.done'), /403 Forbidden/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no horizontal scroll at phone width (overflow ${overflow}px)`);
  await screenshot(page, 'lessons-dark-narrow');
  await page.setViewportSize({ width: 1280, height: 800 });
  await screenshot(page, 'lessons-dark');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a pasted scenario opens with its lesson; a broken one is refused with its line', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await page.getByRole('button', { name: 'Open the gallery' }).click();
  const paste = page.getByLabel('…or paste one');
  await paste.fill('apiVersion: converge.dev/v1\nkind: Scenario\nname: mine\nseeed: 2\n');
  await page.getByRole('button', { name: 'Open pasted scenario' }).click();
  await page.locator('#scenario-error').waitFor();
  assert.match(await text(page, '#scenario-error'), /^The scenario could not be opened: line 4, column 1: unknown field `seeed`/);
  await paste.fill([
    'apiVersion: converge.dev/v1', 'kind: Scenario', 'name: mine',
    'objects:', '  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}, data: {a: "1"}}',
    'actions:', '  - {at: 2s, verb: patch, target: configmaps/default/c, patch: {data: {a: "2"}}}',
    'lesson:', '  title: My lesson', '  steps:',
    '    - text: Press Next event until alice edits c.',
    '      until: [{target: configmaps/default/c, field: data.a, equals: "2"}]',
    '  check: {question: Who edited c?, choices: [alice, bob], answer: 0}',
  ].join('\n'));
  await page.getByRole('button', { name: 'Open pasted scenario' }).click();
  await page.getByRole('heading', { name: 'My lesson', level: 2 }).waitFor();
  assert.equal(new URL(page.url()).search, '?scenario=custom');
  await nextEventUntil(page, 'All 1 steps done');
  await page.getByLabel('alice', { exact: true }).check();
  await page.locator('#lesson-done').waitFor();
  await page.reload();
  await page.getByRole('heading', { name: 'My lesson', level: 2 }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test('the Job lesson plays: the Job backs off, fails with BackoffLimitExceeded and says so', T, async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=job-backoff-limit`, { plainEditor: true });
  await page.getByRole('heading', { name: 'A Job that gives up', level: 2 }).waitFor();
  assert.equal(await text(page, '#lesson-progress'), 'Step 1 of 2');
  await page.getByLabel('Speed').selectOption({ label: 'max' });
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'All 2 steps done', null, T);
  if (await page.getByRole('button', { name: 'Pause', exact: true }).isVisible()) {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
  }
  // The tree lists the Job with kstatus' verdict, and its three failed pods under it.
  const job = page.locator('.object-list li.row', { hasText: 'migrate' }).filter({ hasText: 'Job' }).first();
  assert.match(await job.innerText(), /Job\s+migrate[\s\S]*Failed/);
  await job.locator('button.object').click();
  await page.locator('#conditions tr[data-condition="Failed"]').waitFor();
  assert.match(await text(page, '#conditions tr[data-condition="FailureTarget"]'), /True[\s\S]*BackoffLimitExceeded/);
  assert.match(await text(page, '#conditions tr[data-condition="Failed"]'), /True[\s\S]*BackoffLimitExceeded/);
  assert.match(await text(page, '.fields tr[data-field="/failed"]'), /3/);
  // A Job's status has no observedGeneration: nothing to call stale.
  assert.equal(await text(page, '#generation-badge'), "not in this kind's status");
  assert.match(await text(page, '#events'), /BackoffLimitExceeded[\s\S]*Job has reached the specified backoff limit/);
  await screenshot(page, 'lessons-job-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the StatefulSet lesson plays: db-2 is updated behind the partition, then the rest, highest ordinal first', T, async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=statefulset-partition`, { plainEditor: true });
  await page.getByRole('heading', { name: 'A partitioned rollout', level: 2 }).waitFor();
  assert.equal(await text(page, '#lesson-progress'), 'Step 1 of 4');
  await page.getByLabel('Speed').selectOption({ label: 'max' });
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'All 4 steps done', null, T);
  if (await page.getByRole('button', { name: 'Pause', exact: true }).isVisible()) {
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
  }
  // The tree lists the StatefulSet with kstatus' verdict; its Pods carry their ordinals.
  const sts = page.locator('.object-list li.row', { hasText: 'db' }).filter({ hasText: 'StatefulSet' }).first();
  assert.match(await sts.innerText(), /StatefulSet\s+db[\s\S]*Current/);
  for (const name of ['db-0', 'db-1', 'db-2']) {
    await page.locator('.object-list li.row', { hasText: name }).first().waitFor();
  }
  await sts.locator('button.object').click();
  assert.match(await text(page, '.fields tr[data-field="/currentReplicas"]'), /3/);
  assert.match(await text(page, '.fields tr[data-field="/updatedReplicas"]'), /3/);
  const current = await text(page, '.fields tr[data-field="/currentRevision"]');
  const update = await text(page, '.fields tr[data-field="/updateRevision"]');
  assert.match(current, /db-[a-z0-9]+/);
  assert.equal(current.replace(/currentRevision/, ''), update.replace(/updateRevision/, ''));
  assert.equal(await text(page, '#generation-badge'), 'caught up');
  assert.match(await text(page, '#events'), /SuccessfulDelete[\s\S]*delete Pod db-0 in StatefulSet db successful/);
  await screenshot(page, 'lessons-statefulset-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the readiness lesson plays: the probe fails, the endpoints go not ready and the Deployment is unavailable', { timeout: 180_000 }, async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=readiness-probe-endpoints`, { plainEditor: true });
  await page.getByRole('heading', { name: 'Readiness takes a Pod out of its Service', level: 2 }).waitFor();
  assert.equal(await text(page, '#lesson-progress'), 'Step 1 of 4');
  // Event by event, so the world stops where step 3 completes: every endpoint out of rotation,
  // before the probe passes again at 60s.
  await nextEventUntil(page, 'Step 4 of 4', 2000);
  // The tree shows the Service and, under it, its EndpointSlice with kstatus' verdict.
  const slice = page.locator('.object-list li.row', { hasText: 'EndpointSlice' }).first();
  assert.match(await slice.innerText(), /EndpointSlice\s+web-[a-z0-9]{5}[\s\S]*Current/);
  await slice.locator('button.object').click();
  // No status: the panel shows the endpoints the controller wrote in its place.
  await page.locator('.fields tr[data-field="/endpoints/0/conditions/ready"]').waitFor();
  for (const i of [0, 1, 2]) {
    for (const field of ['ready', 'serving', 'terminating']) {
      assert.match(await text(page, `.fields tr[data-field="/endpoints/${i}/conditions/${field}"]`), /false/);
    }
  }
  assert.equal(await text(page, '#generation-badge'), "not in this kind's status");
  const deployment = page.locator('.object-list li.row', { hasText: 'Deployment' }).first();
  await deployment.locator('button.object').click();
  await page.locator('#conditions tr[data-condition="Available"]').waitFor();
  assert.match(await text(page, '#conditions tr[data-condition="Available"]'), /False[\s\S]*MinimumReplicasUnavailable/);
  await screenshot(page, 'lessons-readiness-light');
  assert.deepEqual(problems, []);
  await context.close();
});
