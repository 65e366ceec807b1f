// "Why?" as a person uses it (issue 16): scale web from 3 to 5, ask why readyReplicas is 5,
// read the chain back to alice's request, follow its hops (the timeline scrubs, the object is
// selected); the sequence diagram and the convergence chart, checked through their text
// alternatives and by screenshots at 1280 px light and dark and at phone width.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serve, launch, openPage, screenshot, codeEditor, editorText, retypeLine, axeViolations,
} from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };
const text = (page, sel) => page.locator(sel).innerText();
const steps = async (page) => parseInt(await text(page, '#steps'), 10);

/** Types 5 over web's 3 replicas in the editor, as a person would, and applies it. */
async function scaleTo5(page) {
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await codeEditor(page);
  assert.ok((await editorText(page)).includes('"replicas": 3,'));
  await retypeLine(page, '"replicas": 3,', '"replicas": 5,');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
}

const hops = (page) => page.locator('#why .why-hops > li');

test('Why? on readyReplicas after a scale: the chain back to alice, and its hops followed', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await scaleTo5(page);
  await page.getByRole('button', { name: 'Run until converged' }).click();
  await page.waitForFunction(() => document.querySelector('[data-field="/readyReplicas"] td:not(.why-cell)')?.textContent.startsWith('5'), null, T);
  const live = await steps(page);

  await page.getByRole('button', { name: 'Why is status.readyReplicas 5?' }).click();
  await page.locator('#why').waitFor();
  // Focus moves to the chain's heading, so a keyboard or screen-reader user lands on it.
  await page.waitForFunction(() => document.activeElement?.id === 'why-h');
  assert.match(await text(page, '#why-title'), /^deployments default\/web status\.readyReplicas = 5 at t=\d+\.\d{3}s$/);
  const rows = await hops(page).allInnerTexts();
  assert.match(rows[0], /^t=\d+\.\d{3}s update deployments\/status default\/web 200 by system:serviceaccount:kube-system:deployment-controller /);
  assert.ok(rows.some((r) => /replicaset-controller reconcile default\/web-/.test(r)), rows.join('\n'));
  assert.ok(rows.some((r) => /scheduler reconcile default\/web-/.test(r)), rows.join('\n'));
  assert.ok(rows.some((r) => /patch pods\/status default\/web-\S+ 200 by system:node:node-\d/.test(r)), rows.join('\n'));
  assert.match(rows[rows.length - 1], /^t=\d+\.\d{3}s root: request by alice \(input \d+, line \d+\)$/);

  // Keyboard: from the heading, Tab passes Close and reaches the first hop; Enter follows it
  // (the live step, web selected: it is marked as the hop being looked at).
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.activeElement?.textContent === 'Close');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => document.activeElement?.classList.contains('hop-go')
    && document.activeElement.textContent.includes('update deployments/status default/web'));
  await page.keyboard.press('Enter');
  await page.locator('#why .hop-go[aria-current="step"]').first().waitFor();
  assert.match(await page.locator('#why .hop-go[aria-current="step"]').first().innerText(), /update deployments\/status default\/web/);

  // The root: the world after alice's request, before any controller acted on it.
  await page.locator('#why .root .hop-go').click();
  await page.waitForFunction((s) => document.querySelector('label[for="scrub"]')?.textContent === `Step ${s - 1} of ${s}`, live);
  assert.equal(await text(page, '.scrub-note'), `Viewing step ${live - 1} of ${live}: steps and edits fork from here.`);
  assert.equal(await text(page, '#generation'), '2');
  assert.equal(await text(page, '#observed-generation'), '1');
  assert.match(await text(page, '[data-field="/readyReplicas"] td:not(.why-cell)'), /^3/);
  assert.equal(await page.locator('#why .root .hop-go').getAttribute('aria-current'), 'step');
  // The chain stays open while its hops are followed.
  assert.deepEqual(await hops(page).allInnerTexts(), rows);

  // A pod's hop: back to the live world, the pod selected in the tree and the status pane.
  const podHop = page.locator('#why .hop-go', { hasText: /patch pods\/status default\/web-/ }).first();
  const pod = (await podHop.innerText()).match(/default\/(web-\S+)/)[1];
  await podHop.click();
  await page.waitForFunction((s) => document.querySelector('label[for="scrub"]')?.textContent === `Step ${s} of ${s}`, live);
  await page.waitForFunction((p) => document.querySelector('.object-list [aria-current="true"]')?.textContent.includes(p), pod);
  assert.match(await text(page, '[data-field="/phase"] td:not(.why-cell)'), /^Running/);
  assert.equal(await page.locator('.scrub-note').count(), 0);

  // Closing it gives the pane back.
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  await page.locator('#why').waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await context.close();
});

test('Why? on a condition and on a tree badge; an old value names the write that last changed it', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await page.locator('[data-condition="Available"]').waitFor();
  await page.getByRole('button', { name: 'Why is Available True?' }).click();
  await page.locator('#why-title').waitFor();
  assert.match(await text(page, '#why-title'), /^deployments default\/web status\.conditions\[type=Available\]\.status = "True" at /);
  const rows = await hops(page).allInnerTexts();
  assert.match(rows[0], /decided Available=True: availableReplicas 3 >= minAvailable 3/);
  assert.match(rows[rows.length - 1], /root: request by alice/);
  await page.getByRole('button', { name: /^Why is Deployment web Current\?$/ }).click();
  await page.waitForFunction(() => document.querySelector('#why-title')?.textContent.startsWith('deployments default/web status = '));
  assert.match(await hops(page).first().innerText(), /^kstatus=Current: the apps\/Deployment rule: /);
  assert.deepEqual(problems, []);
  await context.close();
});

test('the sequence diagram and the convergence chart, as text and as pictures (light, dark, phone)', async () => {
  for (const [name, opts] of [
    ['why-light', { colorScheme: 'light' }],
    ['why-dark', { colorScheme: 'dark' }],
    ['why-phone', { colorScheme: 'light', viewport: { width: 390, height: 844 } }],
  ]) {
    const { page, context, problems } = await openPage(browser, server.url, opts);
    await scaleTo5(page);
    // A refusal: app may not write web's status.
    await page.getByLabel('Act as').selectOption('app');
    await page.getByLabel('Write').selectOption('status');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.includes('Forbidden'));
    for (let i = 0; i < 8; i++) await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '12 steps');

    // The sequence diagram is the timeline's default form; its rows as text.
    assert.equal(await page.getByRole('button', { name: 'Sequence', exact: true }).getAttribute('aria-pressed'), 'true');
    const seq = await page.locator('#sequence-text li').allInnerTexts();
    assert.ok(seq.some((r) => /^step 3, t=\d+\.\d{3}s, request: user:alice → API server: update deployments default\/web$/.test(r)), seq.join('\n'));
    assert.ok(seq.some((r) => /^step 3, t=\d+\.\d{3}s, response: API server → user:alice: 200$/.test(r)), seq.join('\n'));
    assert.ok(seq.some((r) => /^step 4, t=\d+\.\d{3}s, refused: API server → user:app: 403 deployments\.apps "web" is forbidden/.test(r)), seq.join('\n'));
    assert.ok(seq.some((r) => /watch delivery: API server → deployment-controller: watch MODIFIED deployments default\/web$/.test(r)), seq.join('\n'));
    assert.ok(seq.some((r) => /request: deployment-controller → API server: update replicasets default\/web-/.test(r)), seq.join('\n'));
    const lanes = await page.locator('#sequence .lane-name').allTextContents();
    assert.equal(lanes[0], 'user:alice');
    assert.equal(lanes[2], 'API server');
    assert.ok(lanes.indexOf('deployment-controller') > 2, lanes.join(', '));
    // Deliveries that queued nothing: folded, with their count; drawn when asked.
    const folded = (await text(page, '#folded')).match(/^(\d+) watch deliveries that queued nothing are folded\.$/);
    assert.ok(folded && Number(folded[1]) > 0, await text(page, '#folded'));
    assert.ok(!seq.some((r) => r.includes('(queued nothing)')));
    await page.getByRole('button', { name: `Show them (${folded[1]})` }).click();
    await page.waitForFunction(() => /are drawn\.$/.test(document.querySelector('#folded')?.textContent ?? ''));
    const open = await page.locator('#sequence-text li').allInnerTexts();
    assert.ok(open.some((r) => r.endsWith('(queued nothing)')), open.join('\n'));
    await page.getByRole('button', { name: 'Fold them' }).click();
    await page.waitForFunction(() => /are folded\.$/.test(document.querySelector('#folded')?.textContent ?? ''));

    // Why? highlights its chain in the diagram.
    await page.getByRole('button', { name: 'Why is metadata.generation 2?' }).click();
    await page.locator('#why-title').waitFor();
    assert.match(await hops(page).first().innerText(), /update deployments default\/web 200 by alice/);
    await page.waitForFunction(() => [...document.querySelectorAll('#sequence-text li')].some((li) => li.textContent.endsWith('(in the Why? chain)')));
    assert.ok((await page.locator('#sequence g.chain').count()) > 0);

    // The chart: desired against observed, generation against observedGeneration, bands, cursor.
    const chart = await page.locator('#chart-text li').allInnerTexts();
    assert.match(chart[0], /^From t=0\.000s to t=\d+\.\d{3}s, \d+ remembered changes\.$/);
    assert.ok(chart.some((l) => /^spec\.replicas: 3 from t=0\.000s, 5 from t=\d+\.\d{3}s$/.test(l)), chart.join('\n'));
    assert.ok(chart.some((l) => /^status\.readyReplicas: /.test(l)), chart.join('\n'));
    assert.ok(chart.some((l) => /^metadata\.generation: 1 from t=0\.000s, 2 from t=\d+\.\d{3}s$/.test(l)), chart.join('\n'));
    assert.ok(chart.some((l) => /^status\.observedGeneration: .*2 from t=\d+\.\d{3}s$/.test(l)), chart.join('\n'));
    assert.ok(chart.some((l) => /^Available: .*True from t=\d+\.\d{3}s/.test(l)), chart.join('\n'));
    assert.match(chart[chart.length - 1], /^Cursor at the shown moment, t=\d+\.\d{3}s\.$/);
    assert.equal(await page.locator('#chart path.line').count(), chart.filter((l) => /^(spec|status|metadata)\./.test(l)).length);

    // axe-core's rules hold with the chain, the diagram and the chart on screen.
    assert.deepEqual(await axeViolations(page), [], name);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(overflow, false, `${name}: no horizontal scrolling of the page`);
    await screenshot(page, name);
    await page.locator('#why').screenshot({ path: `target/e2e/${name}-chain.png` });
    await page.locator('#sequence').screenshot({ path: `target/e2e/${name}-sequence.png` });
    // Converged, the chart shows the whole scale: desired first, observed catching up.
    await page.getByRole('button', { name: 'Run until converged' }).click();
    await page.waitForFunction(() => document.querySelector('[data-field="/readyReplicas"] td:not(.why-cell)')?.textContent.startsWith('5'), null, T);
    await page.waitForFunction(() => [...document.querySelectorAll('#chart-text li')].some((l) => /^status\.readyReplicas: .*5 from t=\d+\.\d{3}s$/.test(l.textContent)));
    await page.locator('#chart').screenshot({ path: `target/e2e/${name}-chart.png` });
    await screenshot(page, `${name}-converged`);
    // The cards stay available.
    await page.getByRole('button', { name: 'Cards', exact: true }).click();
    await page.locator('.lane .entry').first().waitFor();
    assert.equal(await page.locator('#sequence').count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  }
});
