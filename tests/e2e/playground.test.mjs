// The playground as a person uses it: edit a Deployment, watch status converge, see refusals,
// keep and share the workspace, and stay safe with hostile strings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serve, launch, openPage, screenshot, codeEditor, editorText, retypeEditor, retypeLine,
} from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const editor = (page) => page.getByRole('textbox', { name: 'Object spec' });
const result = (page) => page.locator('#apply-result');
const T = { timeout: 60_000 };

async function ready(page) {
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await codeEditor(page);
}

/** Selects the spec's replicas line in the editor and types the new count over it. */
async function editReplicas(page, from, to) {
  const text = await editorText(page);
  assert.ok(text.includes(`"replicas": ${from},`), text);
  await retypeLine(page, `"replicas": ${from},`, `"replicas": ${to},`);
  assert.equal(await editorText(page), text.replace(`"replicas": ${from},`, `"replicas": ${to},`));
}

const text = (page, sel) => page.locator(sel).innerText();

test('scaling web from 3 to 5: generation 2, observedGeneration catches up, 5 ready, Available', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  assert.equal(await text(page, '#generation'), '1');
  assert.equal(await text(page, '#generation-badge'), 'caught up');
  await editReplicas(page, 3, 5);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
  assert.equal(await text(page, '#generation'), '2');
  assert.equal(await text(page, '#observed-generation'), '1');
  assert.equal(await text(page, '#generation-badge'), 'stale');
  await screenshot(page, 'playground-stale-light');
  await page.getByLabel('Speed').selectOption({ label: '16x' });
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#observed-generation')?.textContent === '2', null, T);
  await page.waitForFunction(() => document.querySelector('[data-field="/readyReplicas"] td')?.textContent.startsWith('5'), null, T);
  await page.waitForFunction(() => {
    const row = document.querySelector('[data-condition="Available"]');
    return row && row.children[1].textContent === 'True';
  }, null, T);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  assert.equal(await text(page, '#generation-badge'), 'caught up');
  assert.match(await text(page, '#rollout'), /successfully rolled out/);
  // The Deployment controller told why, as `kubectl describe deployment web` lists it.
  const scaled = page.locator('#events tr[data-reason="ScalingReplicaSet"]');
  assert.equal(await scaled.count(), 2);
  assert.match(await scaled.nth(0).innerText(),
    /^Normal\s+ScalingReplicaSet\s+\d+s\s+deployment-controller\s+Scaled up replica set web-[a-z0-9]+ from 0 to 3$/);
  assert.match(await scaled.nth(1).innerText(),
    /^Normal\s+ScalingReplicaSet\s+\d+s\s+deployment-controller\s+Scaled up replica set web-[a-z0-9]+ from 3 to 5$/);
  await screenshot(page, 'playground-converged-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('app may not write /status (403, text kept); the deployment controller may', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  const before = await editorText(page);
  await page.getByLabel('Act as').selectOption('app');
  await page.getByLabel('Write').selectOption('status');
  await page.getByRole('button', { name: 'Apply' }).click();
  await result(page).waitFor();
  assert.match(await result(page).innerText(),
    /^Error from server \(Forbidden\): deployments\.apps "web" is forbidden: User "app" cannot update resource "deployments\/status" in API group "apps" in the namespace "default"/);
  assert.equal(await editorText(page), before);
  await page.getByLabel('Act as').selectOption('system:serviceaccount:kube-system:deployment-controller');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
  assert.deepEqual(problems, []);
  await context.close();
});

test('an edit of an older resourceVersion is refused with 409 and the text is kept', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  await editReplicas(page, 3, 4);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
  await page.getByRole('button', { name: 'Run until converged' }).click();
  await page.locator('#outdated').waitFor();
  await editReplicas(page, 4, 6);
  const mine = await editorText(page);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.includes('Conflict'));
  assert.match(await result(page).innerText(),
    /^Error from server \(Conflict\): Operation cannot be fulfilled on deployments\.apps "web": the object has been modified; please apply your changes to the latest version and try again$/);
  assert.equal(await editorText(page), mine);
  assert.deepEqual(problems, []);
  await context.close();
});

test('malformed JSON is marked at its line and column as you type', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  await retypeEditor(page, '{\n  "kind": "Deployment",\n  "spec": {\n    "replicas": 5,\n  }\n}');
  await page.waitForFunction(() => document.querySelector('#spec-editor-diagnostics')?.textContent.includes('line 5'));
  assert.match(await text(page, '#spec-editor-diagnostics'), /^line 5, column \d+: /);
  assert.equal(await editor(page).getAttribute('aria-invalid'), 'true');
  await screenshot(page, 'playground-malformed-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a reload restores the workspace; a damaged save is recovered with a notice', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.getByRole('button', { name: 'Next event' }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '4 steps');
  await editReplicas(page, 3, 7);
  const mine = await editorText(page);
  await page.getByLabel('Theme').selectOption('dark');
  const clock = await text(page, '#clock');
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '4 steps');
  assert.equal(await text(page, '#clock'), clock);
  await codeEditor(page, '"replicas": 7');
  assert.equal(await editorText(page), mine);
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  // The page saves itself on pagehide, so the damaged save is written by the next document.
  await page.addInitScript(() => {
    if (!sessionStorage.getItem('damaged')) {
      sessionStorage.setItem('damaged', 'yes');
      localStorage.setItem('converge.workspace', '{"v": 1, "actions": [tru');
    }
  });
  await page.reload();
  await page.getByText(/Your saved workspace could not be restored/).waitFor();
  assert.equal(await text(page, '#steps'), '2 steps');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a share link reproduces the same timeline in a fresh browser context', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  await editReplicas(page, 3, 5);
  await page.getByRole('button', { name: 'Apply' }).click();
  for (let i = 0; i < 5; i++) await page.getByRole('button', { name: 'Next event' }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '8 steps');
  const historyLength = await page.evaluate(() => history.length);
  await page.getByRole('button', { name: 'Share' }).click();
  const url = await page.getByLabel(/Share link/).inputValue();
  assert.match(url, /#w1\.[A-Za-z0-9_-]+$/);
  assert.equal(await page.evaluate(() => history.length), historyLength, 'Share does not add history entries');
  const lanes = await text(page, '#sequence-text');
  const clock = await text(page, '#clock');
  const fresh = await openPage(browser, url, {});
  await fresh.page.waitForFunction(() => document.querySelector('#steps')?.textContent === '8 steps');
  assert.equal(await text(fresh.page, '#clock'), clock);
  assert.equal(await text(fresh.page, '#sequence-text'), lanes);
  assert.equal(await text(fresh.page, '#generation'), '2');
  assert.deepEqual(problems, []);
  assert.deepEqual(fresh.problems, []);
  await fresh.context.close();
  await context.close();
});

test('hostile strings in names, labels and messages are shown as text, never run', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  let dialogs = 0;
  page.on('dialog', async (d) => { dialogs++; await d.dismiss(); });
  await ready(page);
  const evil = '<img src=x onerror=alert(1)>';
  const configMap = (name, labels) => JSON.stringify({
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', labels },
  }, null, 2);
  await retypeEditor(page, configMap('hostile', { app: evil }));
  await page.getByRole('button', { name: 'Apply' }).click();
  await result(page).waitFor();
  // Refused (invalid label value, kube's message quotes it) or stored: either way it is text.
  const shown = (await result(page).innerText()) + (await editorText(page));
  assert.ok(shown.includes(evil), shown);
  await retypeEditor(page, configMap(evil, { app: 'web' }));
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.includes('metadata.name'));
  assert.ok((await result(page).innerText()).includes(evil));
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was created');
  assert.equal(dialogs, 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('keyboard: ? opens the help dialog, Escape closes it, n steps, r runs', async () => {
  const { page, context, problems } = await openPage(browser, server.url, {});
  await ready(page);
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('?');
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Run until converged/);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  await page.keyboard.press('n');
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '3 steps');
  await page.keyboard.press('Shift+N');
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '4 steps');
  await page.keyboard.press('r');
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '5 steps');
  assert.deepEqual(problems, []);
  await context.close();
});

test('screenshots: light, dark and phone width after a scale-up', async () => {
  for (const [name, opts] of [
    ['playground-light', { colorScheme: 'light' }],
    ['playground-dark', { colorScheme: 'dark' }],
    ['playground-phone', { colorScheme: 'light', viewport: { width: 390, height: 844 } }],
  ]) {
    const { page, context, problems } = await openPage(browser, server.url, opts);
    await ready(page);
    await editReplicas(page, 3, 5);
    await page.getByRole('button', { name: 'Apply' }).click();
    for (let i = 0; i < 6; i++) await page.getByRole('button', { name: 'Step', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '9 steps');
    await page.getByRole('button', { name: 'Cards', exact: true }).click();
    await page.locator('.lane .entry').first().click();
    await page.locator('#entry-diff').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(overflow, false, `${name}: no horizontal scrolling`);
    await screenshot(page, name);
    assert.deepEqual(problems, []);
    await context.close();
  }
});
