// axe-core in every state the browser suite visits (issue 23): light, dark and phone width, the
// gallery and a lesson, an embed, the help dialog, the editor showing a diagnostic, the page
// before the app is drawn and after a failed start. 0 violations of any impact; a rule is
// disabled only in harness.mjs's AXE_DISABLED, with its reason. (The update notice is checked
// in offline.test.mjs, where it appears; keyboard flows axe cannot judge are in a11y.test.mjs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, codeEditor, clearEditor, typeLines, axeViolations } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 120_000 };

/** Opens `query` with `options`, lets `act(page)` bring the state about, and runs axe on it. */
async function audit(name, query, { options = {}, act = codeEditor, expected = null } = {}) {
  const { page, context, problems } = await openPage(browser, `${server.url}${query}`, options);
  await act(page);
  const violations = await axeViolations(page);
  assert.deepEqual(violations, [], `${name}: axe violations`);
  assert.deepEqual(problems.filter((p) => !expected?.test(p)), []);
  await context.close();
}

const stepped = async (page) => {
  await codeEditor(page);
  // Changed status rows (highlighted) are on screen after a step with a spec change.
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '3 steps');
};

test('the playground in light, dark and at phone width, after a step', T, async () => {
  await audit('light', '', { act: stepped });
  await audit('dark', '', { options: { colorScheme: 'dark' }, act: stepped });
  await audit('phone', '', { options: { viewport: { width: 390, height: 844 } }, act: stepped });
  await audit('phone, dark', '', { options: { viewport: { width: 390, height: 844 }, colorScheme: 'dark' }, act: stepped });
});

test('the changed rows of the status table after an edit, light and dark', T, async () => {
  for (const colorScheme of ['light', 'dark']) {
    await audit(`edited (${colorScheme})`, '', {
      options: { colorScheme },
      act: async (page) => {
        await codeEditor(page);
        await page.locator('.cm-content > .cm-line', { hasText: '"replicas": 3' }).click();
        await page.keyboard.press('End');
        await page.keyboard.press('Shift+Home');
        await page.keyboard.type('"replicas": 5,');
        await page.keyboard.press('Control+Enter');
        await page.getByRole('button', { name: 'Run until converged' }).click();
        await page.locator('tr.changed').first().waitFor();
      },
    });
  }
});

test('the gallery, a lesson and an embed', T, async () => {
  await audit('gallery', '', {
    act: async (page) => {
      await codeEditor(page);
      await page.getByRole('button', { name: 'Open the gallery' }).click();
      await page.locator('[data-scenario]').first().waitFor();
    },
  });
  await audit('lesson', '?scenario=rapid-edits', { act: (page) => page.locator('#lesson-h').waitFor() });
  await audit('lesson, dark', '?scenario=rapid-edits', { options: { colorScheme: 'dark' }, act: (page) => page.locator('#lesson-h').waitFor() });
  await audit('embed', '?embed&id=x&scenario=rapid-edits&lesson', { act: (page) => page.locator('.embed-bar').waitFor() });
  await audit('embed, dark', '?embed&id=x&scenario=rapid-edits&theme=dark', { act: (page) => page.locator('.embed-bar').waitFor() });
});

test('the help dialog and the editor showing a diagnostic', T, async () => {
  await audit('help dialog', '', {
    act: async (page) => {
      await codeEditor(page);
      await page.getByRole('button', { name: 'Shortcuts (?)' }).click();
      await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    },
  });
  for (const colorScheme of ['light', 'dark']) {
    await audit(`diagnostic (${colorScheme})`, '', {
      options: { colorScheme },
      act: async (page) => {
        await codeEditor(page);
        await clearEditor(page);
        await typeLines(page, '{\n  "kind": "Deployment",\n  "spec": ,\n}');
        await page.locator('.cm-lintRange-error').waitFor();
        await page.locator('#spec-editor-diagnostics li').waitFor();
      },
    });
  }
});

test('before the app is drawn, and when it cannot start', T, async () => {
  let release;
  const held = new Promise((ok) => { release = ok; });
  await audit('skeleton', '', {
    options: { ready: false, beforeGoto: (p) => p.route('**/*_bg.wasm', async (r) => { await held; await r.continue(); }) },
    act: (page) => page.getByText('Starting the simulator…').waitFor(),
  });
  release();
  await audit('failed start', '', {
    options: { ready: false, beforeGoto: (p) => p.route('**/*_bg.wasm', (r) => r.abort()) },
    act: (page) => page.getByRole('alert').waitFor(),
    expected: /Failed to load resource|Failed to fetch/, // the refused module, as the test means
  });
});
