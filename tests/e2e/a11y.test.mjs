// Keyboard and layout checks axe-core cannot make (axe itself runs in axe.test.mjs): Tab walks
// the page in reading order without traps and with a visible focus ring, reduced motion stops
// animation, a 1,000-object tree is usable from the keyboard, the RBAC switch works and
// survives a share link, and the conditions table reads at 1280 px and at phone width.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, screenshot } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };

async function ready(page) {
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await page.waitForFunction(() => document.querySelector('#spec-editor')?.value.includes('"kind": "Deployment"'));
}

test('Tab walks the page in reading order with a visible focus ring and no trap', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  await page.evaluate(() => document.activeElement?.blur());
  const seen = [];
  for (let i = 0; i < 400; i++) {
    await page.keyboard.press('Tab');
    const f = await page.evaluate(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      const region = el.closest('header, nav, section, dialog, .notice');
      return {
        id: el.id || el.textContent.trim().slice(0, 30) || el.getAttribute('aria-label'),
        region: region ? (region.getAttribute('aria-labelledby') || region.tagName.toLowerCase()) : 'page',
        top: r.top + window.scrollY,
        visible: r.width > 0 && r.height > 0,
        ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1,
        skip: el.classList.contains('skip'),
      };
    });
    if (f === null) break; // focus left the document: Tab reached the end, nothing trapped it
    seen.push(f);
  }
  assert.ok(seen.length > 20 && seen.length < 400, `Tab stops: ${seen.length}`);
  assert.ok(seen[0].skip, `the first Tab stop is the skip link, got ${JSON.stringify(seen[0])}`);
  for (const f of seen) {
    assert.ok(f.visible, `focused but invisible: ${JSON.stringify(f)}`);
    assert.ok(f.ring, `no visible focus ring: ${JSON.stringify(f)}`);
  }
  // Reading order: header, the gallery/lesson bar, controls, objects, spec, status (its
  // scroller, if focusable), timeline, faults; each region once.
  const order = [];
  for (const f of seen) if (order[order.length - 1] !== f.region) order.push(f.region);
  assert.deepEqual(order.filter((r) => r !== 'page'),
    ['header', 'gallery-h', 'nav', 'objects-h', 'editor-h', 'status-h', 'timeline-h', 'faults-h'].filter((r) => order.includes(r)),
    order.join(' > '));
  for (const region of ['header', 'gallery-h', 'nav', 'objects-h', 'editor-h', 'timeline-h', 'faults-h']) {
    assert.ok(order.includes(region), `Tab never reaches ${region}: ${order.join(' > ')}`);
  }
  // The editor does not trap Tab: the stop after the textarea is outside it.
  const editorStop = seen.findIndex((f) => f.id === 'spec-editor');
  assert.ok(editorStop >= 0 && seen[editorStop + 1]?.id !== 'spec-editor');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the skip link jumps to the editor; the help dialog returns focus when closed', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === '#spec-editor');
  const help = page.getByRole('button', { name: 'Shortcuts (?)' });
  await help.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await dialog.waitFor();
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Close');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'help-button');
  assert.deepEqual(problems, []);
  await context.close();
});

test('with reduced motion nothing animates', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await ready(page);
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '3 steps');
  const moving = await page.evaluate(() => {
    const all = [...document.querySelectorAll('*')];
    return all.filter((el) => {
      const s = getComputedStyle(el);
      return s.animationName !== 'none' || s.transitionDuration.split(',').some((d) => parseFloat(d) > 0);
    }).map((el) => el.tagName + '.' + el.className).slice(0, 5);
  });
  assert.deepEqual(moving, []);
  assert.deepEqual(await page.evaluate(() => document.getAnimations().length), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('a tree of ~1,000 objects: the big group is collapsed, opens, pages and is walked by keyboard', { timeout: 240_000 }, async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?starter=large`, { plainEditor: true });
  await page.waitForFunction(() => parseInt(document.querySelector('#object-count')?.textContent ?? '0', 10) >= 950,
    null, { timeout: 180_000 });
  const rows = () => page.locator('.object-list li').count();
  assert.ok(await rows() < 40, `collapsed tree rows: ${await rows()}`);
  const twisty = page.getByRole('button', { name: /^960 children of ReplicaSet/ });
  assert.equal(await twisty.getAttribute('aria-expanded'), 'false');
  await twisty.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.object-list li .kind').length > 50);
  assert.equal(await twisty.getAttribute('aria-expanded'), 'true');
  const pods = () => page.locator('.object-list li .kind', { hasText: 'Pod' }).count();
  assert.equal(await pods(), 50);
  const more = page.getByRole('button', { name: 'Show 50 more (910 not listed)' });
  await more.focus();
  await page.keyboard.press('Enter');
  await page.getByRole('button', { name: 'Show 50 more (860 not listed)' }).waitFor();
  assert.equal(await pods(), 100);
  // Arrow keys walk the rows; Home/End jump; Left closes the group from its row, Right opens it.
  const focusedName = () => page.evaluate(() => document.activeElement?.closest('li')?.querySelector('.name')?.textContent
    ?? document.activeElement?.textContent);
  const podButtons = page.locator('.object-list li button.object', { hasText: 'Pod' });
  await podButtons.nth(0).focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  assert.equal(await focusedName(), await podButtons.nth(2).locator('.name').innerText());
  await page.keyboard.press('ArrowUp');
  assert.equal(await focusedName(), await podButtons.nth(1).locator('.name').innerText());
  await page.keyboard.press('End');
  assert.equal(await focusedName(), await page.locator('.object-list li button.object').last().locator('.name').innerText());
  await page.keyboard.press('Home');
  assert.equal(await focusedName(), 'web');
  await page.keyboard.press('ArrowDown');
  assert.match(await focusedName(), /^web-/);
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelectorAll('.object-list li .kind').length < 40);
  assert.equal(await twisty.getAttribute('aria-expanded'), 'false');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelectorAll('.object-list li .kind').length > 100);
  // A pod row is selectable from the keyboard and loads into the editor.
  const pod = page.locator('.object-list li button.object', { hasText: 'Pod' }).nth(60);
  const podName = (await pod.locator('.name').innerText()).trim();
  await pod.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction((n) => document.querySelector('#spec-editor')?.value.includes(`"name": "${n}"`), podName);
  assert.equal(await pod.getAttribute('aria-current'), 'true');
  await screenshot(page, 'tree-large-light');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the RBAC switch lets app write /status, and a share link keeps it off', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await ready(page);
  const rbac = page.getByLabel('Enforce RBAC in the API server');
  assert.equal(await rbac.isChecked(), true);
  await rbac.uncheck();
  await page.waitForFunction(() => /RBAC is off/.test(document.querySelector('#rbac-note')?.textContent ?? ''));
  await page.getByRole('button', { name: 'Cards', exact: true }).click();
  assert.ok([...(await page.locator('.lane .entry').allInnerTexts())].some((t) => /rbac off/.test(t)));
  await page.getByLabel('Act as').selectOption('app');
  await page.getByLabel('Write').selectOption('status');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'));
  await page.getByRole('button', { name: 'Share' }).click();
  const url = await page.locator('#share-url').inputValue();
  const fresh = await openPage(browser, url, { plainEditor: true });
  await fresh.page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  await fresh.page.waitForFunction(() => /RBAC is off/.test(document.querySelector('#rbac-note')?.textContent ?? ''));
  assert.equal(await fresh.page.getByLabel('Enforce RBAC in the API server').isChecked(), false);
  await fresh.page.getByLabel('Enforce RBAC in the API server').check();
  await fresh.page.waitForFunction(() => /To see RBAC at work/.test(document.querySelector('#rbac-note')?.textContent ?? ''));
  assert.deepEqual(fresh.problems, []);
  await fresh.context.close();
  assert.deepEqual(problems, []);
  await context.close();
});

test('the conditions table and controller states read at 1280 px and at phone width: no word is split', async () => {
  for (const [name, viewport, colorScheme] of [
    ['conditions-1280-light', { width: 1280, height: 800 }, 'light'],
    ['conditions-1280-dark', { width: 1280, height: 800 }, 'dark'],
    ['conditions-phone', { width: 390, height: 844 }, 'light'],
  ]) {
    const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true, viewport, colorScheme });
    await ready(page);
    await page.locator('#conditions [data-condition="Available"]').waitFor(T);
    const split = await page.evaluate(() => {
      // A word is split when a cell's single longest word is wider than the cell's text box.
      const out = [];
      for (const cell of document.querySelectorAll('#conditions td, #conditions th, .faults td.state')) {
        if (cell.offsetParent === null) continue;
        const range = document.createRange();
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
          const words = t.textContent.split(/\s+/).filter(Boolean);
          let at = 0;
          for (const w of words) {
            const start = t.textContent.indexOf(w, at);
            at = start + w.length;
            range.setStart(t, start);
            range.setEnd(t, at);
            if (range.getClientRects().length > 1) out.push(`${cell.dataset.label ?? cell.textContent}: ${w}`);
          }
        }
      }
      // Stacked cells label themselves with ::before: the label must fit its grid column.
      const ctx = document.createElement('canvas').getContext('2d');
      for (const cell of document.querySelectorAll('#conditions td')) {
        const before = getComputedStyle(cell, '::before');
        if (before.content === 'none' || before.content === 'normal') continue;
        ctx.font = `${before.fontWeight} ${before.fontSize} ${before.fontFamily}`;
        const label = cell.dataset.label;
        const column = parseFloat(getComputedStyle(cell).gridTemplateColumns.split(' ')[0]);
        if (ctx.measureText(label).width > column + 0.5) out.push(`label ${label} wider than ${column}px`);
      }
      return out;
    });
    assert.deepEqual(split, [], `${name}: words broken across lines`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(overflow, false, `${name}: no horizontal scrolling`);
    await page.locator('.pane.status').screenshot({ path: await screenshot(page, name) });
    assert.deepEqual(problems, []);
    await context.close();
  }
});
