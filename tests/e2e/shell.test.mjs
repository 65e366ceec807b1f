// The app shell loads, Step changes what a person sees, and a panic shows a readable panel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, screenshot } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

test('the shell shows its header, panes and controls', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  for (const name of ['Objects', 'Spec', 'Status']) {
    await page.getByRole('heading', { name, level: 2 }).waitFor();
  }
  for (const name of ['Step', 'Play', 'Reset']) {
    assert.ok(await page.getByRole('button', { name, exact: true }).isVisible(), `${name} button visible`);
  }
  assert.match(await page.locator('.object-list').innerText(), /Deployment\s+web/);
  assert.deepEqual(problems, []);
  await context.close();
});

test('pressing Step advances the simulated clock', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  const clock = page.locator('#clock');
  await clock.waitFor();
  const before = await clock.innerText();
  assert.match(before, /^t=\d+\.\d{3}s$/);
  // The starter is two steps: alice creates Deployment web, then the cluster converges.
  assert.equal(await page.locator('#steps').innerText(), '2 steps');
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '3 steps');
  await screenshot(page, 'shell-after-step-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the shell reads in the dark theme and at phone width', async () => {
  const dark = await openPage(browser, server.url, { colorScheme: 'dark' });
  await dark.page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  const bg = await dark.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(13, 17, 23)', 'dark background follows the system theme');
  await screenshot(dark.page, 'shell-dark');
  await dark.context.close();

  const narrow = await openPage(browser, server.url, { viewport: { width: 390, height: 844 } });
  await narrow.page.getByRole('button', { name: 'Step', exact: true }).waitFor();
  const overflow = await narrow.page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  assert.equal(overflow, false, 'no horizontal scrolling at phone width');
  await screenshot(narrow.page, 'shell-narrow');
  await narrow.context.close();
});

test('a panic in the wasm module shows a readable error panel, not a blank page', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?debug-panic`);
  const panel = page.getByRole('alert');
  await panel.waitFor();
  assert.match(await panel.innerText(), /Converge stopped because of an internal error/);
  assert.match(await panel.innerText(), /deliberate panic requested by the \?debug-panic URL parameter/);
  await screenshot(page, 'panic-panel');
  // The panic is reported on the console too; nothing else went wrong.
  assert.ok(problems.some((p) => p.includes('Converge panicked')), problems.join('\n'));
  await context.close();
});
