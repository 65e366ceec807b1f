// Coming back after something went wrong: a reload in the middle of auto-run, a saved workspace
// that is damaged or from another version, a share link that cannot be opened, a panic. The
// page always comes back with the playground (never blank) and says what happened.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, screenshot } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const text = (page, sel) => page.locator(sel).innerText();
/**
 * Reloads with `saved` as the stored workspace. Written by an init script of the new document:
 * the page saves its own state when it goes away (pagehide), so a value written before the
 * reload would be overwritten, as a person's own tab would do.
 */
let damage = 0;
async function reloadWithSaved(page, saved) {
  const key = `recovery-test-${damage++}`;
  await page.addInitScript(([k, v]) => {
    if (!sessionStorage.getItem(k)) {
      sessionStorage.setItem(k, 'written');
      localStorage.setItem('converge.workspace', v);
    }
  }, [key, saved]);
  await page.reload();
}
const saved = (page) => page.evaluate(() => localStorage.getItem('converge.workspace'));
const steps = (page, n) => page.waitForFunction((n) => document.querySelector('#steps')?.textContent === `${n} steps`, n);

async function ready(page) {
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await page.waitForFunction(() => document.querySelector('#spec-editor')?.value.includes('"kind": "Deployment"'));
}

/** The playground is there and works: Step advances the step counter. */
async function usable(page) {
  await ready(page);
  const before = Number((await text(page, '#steps')).split(' ')[0]);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await steps(page, before + 1);
}

test('a reload in the middle of auto-run comes back at the exact step, paused', async () => {
  // A fake clock: play ticks happen only when the test advances time, so the step on screen is
  // the step the page was at when it was reloaded.
  const { page, context, problems } = await openPage(browser, server.url, {
    plainEditor: true,
    beforeGoto: (p) => p.clock.install(),
  });
  await ready(page);
  // A paused fake clock moves only when the test says so.
  await page.clock.pauseAt(new Date('2030-01-01T00:00:00Z'));
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.clock.runFor(1_500);
  await page.waitForFunction(() => Number(document.querySelector('#steps')?.textContent.split(' ')[0]) > 10);
  const shownSteps = await text(page, '#steps');
  const shownClock = await text(page, '#clock');
  assert.equal(await page.getByRole('button', { name: 'Pause', exact: true }).count(), 1, 'still playing');
  await page.reload();
  await ready(page);
  assert.equal(await text(page, '#steps'), shownSteps);
  assert.equal(await text(page, '#clock'), shownClock);
  assert.equal(await page.getByRole('button', { name: 'Play', exact: true }).count(), 1, 'restored paused');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a saved workspace from an older version is replaced by a fresh one, with a notice', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await steps(page, 3);
  // The first saves had no format number; rewrite the real save that way.
  const old = JSON.parse(await saved(page));
  delete old.v;
  await reloadWithSaved(page, JSON.stringify(old));
  const notice = page.getByRole('status').filter({ hasText: 'could not be restored' });
  await notice.waitFor();
  assert.match(await notice.innerText(), /from an older Converge \(format 0\); this build reads format 1\); started a fresh one/);
  assert.equal(await text(page, '#steps'), '2 steps');
  await screenshot(page, 'recovery-old-save');
  await usable(page);
  await notice.getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await page.getByText('could not be restored').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a corrupted save is recovered with a notice naming what is wrong', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await steps(page, 3);
  const cases = [
    // Cut short (a full disk, a crash mid-write).
    [(s) => s.slice(0, s.length / 2), /not valid: EOF while parsing/],
    // A value out of bounds: one step asking for a year of simulated time.
    [(s) => s.replace('"a":"runUntilConverged"', '"a":"apply","input":{"input":"advance","ms":31536000000}'),
      /not valid: actions\[1\]\.input\.ms: 31536000000 ms is more than the 600000 ms one step may advance/],
    // Not JSON at all.
    [() => '\u0000\u0001garbage', /not valid: expected value at line 1 column 1/],
  ];
  for (const [damage, says] of cases) {
    await reloadWithSaved(page, damage(await saved(page)));
    const notice = page.getByRole('status').filter({ hasText: 'could not be restored' });
    await notice.waitFor();
    assert.match(await notice.innerText(), says);
    await usable(page);
  }
  assert.deepEqual(problems, []);
  await context.close();
});

test('a share link that cannot be opened falls back to a fresh workspace, with a notice', async () => {
  const links = [
    ['#w0.AAAA', /from an older Converge \(format 0\)/],
    ['#w1.eJzLSM3JyQcABiwCFQ', /the link is damaged \(compression\)/],
    ['#w1.%%%', /the link is damaged \(base64\)/],
  ];
  for (const [hash, says] of links) {
    const { page, context, problems } = await openPage(browser, `${server.url}${hash}`, { plainEditor: true });
    const notice = page.getByRole('status').filter({ hasText: 'The share link could not be opened' });
    await notice.waitFor();
    assert.match(await notice.innerText(), says);
    assert.equal(await text(page, '#steps'), '2 steps');
    await usable(page);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('after a panic the error panel shows, and the last saved state survives a reload', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  await page.getByRole('button', { name: 'Next event' }).click();
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await steps(page, 4);
  const clock = await text(page, '#clock');
  await page.goto(`${server.url}?debug-panic`);
  const panel = page.getByRole('alert');
  await panel.waitFor();
  assert.match(await panel.innerText(), /Converge stopped because of an internal error/);
  await page.goto(server.url);
  await ready(page);
  assert.equal(await text(page, '#steps'), '4 steps');
  assert.equal(await text(page, '#clock'), clock);
  assert.equal(await page.getByRole('alert').count(), 0);
  // The panic was reported on the console; nothing else went wrong.
  assert.deepEqual(problems.filter((p) => !p.includes('Converge panicked') && !p.includes('unreachable')), []);
  await context.close();
});
