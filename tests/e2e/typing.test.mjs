// Typing into the editor people get (CodeMirror, key by key): every character is the person's,
// never a playground shortcut; the shortcuts come back once the editor loses focus; and the
// newcomer's hint says what to try until the first edit is applied.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serve, launch, openPage, screenshot, codeEditor, editorText, clearEditor, typeLines, retypeLine,
} from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };
const steps = (page) => page.locator('#steps').innerText();
const inEditor = (page) => page.evaluate(() => !!document.activeElement?.closest('.cm-editor'));

/** Nothing but the editor moved: same step count, no dialog, not playing. */
async function onlyTheEditorChanged(page, stepsBefore) {
  assert.equal(await steps(page), stepsBefore, 'the step counter did not move');
  assert.equal(await page.locator('dialog#help[open]').count(), 0, 'the help dialog did not open');
  assert.equal(await page.getByRole('button', { name: 'Play', exact: true }).count(), 1, 'not playing');
}

const JSON_MANIFEST = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "nginx-typed",
    "namespace": "default",
    "labels": {
      "app": "nginx"
    },
    "annotations": {
      "note": "nginx running? ready?"
    }
  },
  "spec": {
    "replicas": 2,
    "selector": {
      "matchLabels": {
        "app": "nginx"
      }
    },
    "template": {
      "metadata": {
        "labels": {
          "app": "nginx"
        }
      },
      "spec": {
        "containers": [
          {
            "name": "nginx",
            "image": "nginx:1.27",
            "ports": [
              {
                "containerPort": 80
              }
            ]
          }
        ]
      }
    }
  }
}`;

const YAML_MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-yaml
  namespace: default
  labels:
    app: nginx-yaml
  annotations:
    note: "run nginx? yes: now"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx-yaml
  template:
    metadata:
      labels:
        app: nginx-yaml
    spec:
      containers:
        - name: nginx
          image: nginx:1.27
          ports:
            - containerPort: 80`;

const YAML_EXPECTED = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'nginx-yaml', namespace: 'default', labels: { app: 'nginx-yaml' }, annotations: { note: 'run nginx? yes: now' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'nginx-yaml' } },
    template: {
      metadata: { labels: { app: 'nginx-yaml' } },
      spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
    },
  },
};

/** Every leaf of `typed` is in `stored` with the same value (the server adds its own fields). */
function assertContains(stored, typed, path = '') {
  if (typed !== null && typeof typed === 'object') {
    assert.equal(typeof stored, 'object', `${path} is an object in the stored object`);
    assert.equal(Array.isArray(stored), Array.isArray(typed), `${path}: list or map as typed`);
    if (Array.isArray(typed)) assert.equal(stored.length, typed.length, `${path}: as many items as typed`);
    for (const [k, v] of Object.entries(typed)) assertContains(stored?.[k], v, `${path}.${k}`);
  } else {
    assert.equal(stored, typed, `${path} as typed`);
  }
}

/** Switches the editor to JSON and reads the stored object it shows. */
async function shownAsJson(page, name) {
  await page.getByRole('button', { name: 'JSON', exact: true }).click();
  await codeEditor(page, `"name": "${name}"`);
  return JSON.parse(await editorText(page));
}

test('a whole Deployment typed key by key, in JSON and then in YAML, is exactly what is applied', { timeout: 240_000 }, async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await codeEditor(page);
  const first = await steps(page);
  await clearEditor(page);
  await typeLines(page, JSON_MANIFEST);
  assert.equal(await editorText(page), JSON_MANIFEST, 'the editor holds exactly what was typed');
  await onlyTheEditorChanged(page, first);
  assert.equal(await page.locator('#spec-editor-diagnostics li').count(), 0, 'no diagnostic');

  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('201'), null, T);
  await page.locator('.object-list').getByText('Deployment nginx-typed').waitFor();
  await codeEditor(page, '"resourceVersion"');
  assertContains(await shownAsJson(page, 'nginx-typed'), JSON.parse(JSON_MANIFEST));

  await page.getByRole('button', { name: 'YAML', exact: true }).click();
  await codeEditor(page, 'apiVersion: apps/v1');
  const second = await steps(page);
  await clearEditor(page);
  await typeLines(page, YAML_MANIFEST);
  assert.equal(await editorText(page), YAML_MANIFEST, 'the editor holds exactly what was typed');
  await onlyTheEditorChanged(page, second);
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('201'), null, T);
  await page.locator('.object-list').getByText('Deployment nginx-yaml').waitFor();
  await codeEditor(page, 'resourceVersion:');
  assertContains(await shownAsJson(page, 'nginx-yaml'), YAML_EXPECTED);
  assert.deepEqual(problems, []);
  await context.close();
});

test('every printable ASCII character typed into the editor changes only the editor', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await codeEditor(page);
  const before = await steps(page);

  // The report's reproduction: the end of the "kind" line, then ` "nginx running"`.
  const text = await editorText(page);
  await page.locator('.cm-content > .cm-line', { hasText: '"kind": "Deployment"' }).click();
  await page.keyboard.press('End');
  await page.keyboard.type(' "nginx running"');
  assert.equal(await editorText(page), text.replace('"kind": "Deployment",', '"kind": "Deployment", "nginx running"'));
  await onlyTheEditorChanged(page, before);

  let printable = '';
  for (let c = 0x20; c <= 0x7e; c++) printable += String.fromCharCode(c);
  await clearEditor(page);
  await page.keyboard.type(printable);
  assert.equal(await editorText(page), printable);
  await onlyTheEditorChanged(page, before);
  assert.deepEqual(problems, []);
  await context.close();
});

test('once the editor loses focus (Escape, or a click elsewhere) the shortcuts work again', async () => {
  const { page, context, problems } = await openPage(browser, server.url);
  await codeEditor(page);
  const start = Number.parseInt(await steps(page), 10);
  await page.locator('.cm-content > .cm-line', { hasText: '"kind": "Deployment"' }).click();
  await page.keyboard.press('End');
  await page.keyboard.type('nr');
  assert.match(await editorText(page), /"kind": "Deployment",nr/);
  assert.equal(await steps(page), `${start} steps`);

  await page.keyboard.press('Escape');
  assert.equal(await inEditor(page), false, 'Escape left the editor');
  await page.keyboard.press('n');
  await page.waitForFunction((s) => document.querySelector('#steps')?.textContent === s, `${start + 1} steps`);

  await page.locator('.cm-content > .cm-line', { hasText: '"kind": "Deployment"' }).click();
  await page.keyboard.press('End');
  await page.keyboard.type('n');
  assert.equal(await steps(page), `${start + 1} steps`, 'typing again is typing');
  await page.locator('.tagline').click();
  assert.equal(await inEditor(page), false, 'a click elsewhere left the editor');
  await page.keyboard.press('Shift+N');
  await page.waitForFunction((s) => document.querySelector('#steps')?.textContent === s, `${start + 2} steps`);
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Pause', exact: true }).waitFor();
  await page.keyboard.press('Space');
  await page.getByRole('button', { name: 'Play', exact: true }).waitFor();
  assert.match(await editorText(page), /"kind": "Deployment",nrn/, 'the editor kept what was typed');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the newcomer hint is shown once, reachable by keyboard, and gone after the first edit is applied', async () => {
  for (const [name, opts] of [
    ['hint-light', { colorScheme: 'light' }],
    ['hint-dark', { colorScheme: 'dark' }],
    ['hint-phone', { colorScheme: 'light', viewport: { width: 390, height: 844 } }],
  ]) {
    const { page, context, problems } = await openPage(browser, server.url, opts);
    await codeEditor(page);
    const hint = page.getByRole('complementary', { name: 'Try it:' });
    await hint.waitFor();
    assert.match(await hint.innerText(), /change "replicas": 3 to 5 and press Apply \(Ctrl\+Enter\)\. Then Step \(n\) or Play \(Space\)/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    assert.equal(overflow, false, `${name}: no horizontal scrolling`);
    await hint.screenshot({ path: (await screenshot(page, name)).replace(/\.png$/, '-closeup.png') });
    await retypeLine(page, '"replicas": 3,', '"replicas": 5,');
    await page.keyboard.press('Control+Enter');
    await page.waitForFunction(() => document.querySelector('#apply-result')?.textContent.startsWith('200'), null, T);
    await hint.waitFor({ state: 'detached' });
    await page.reload();
    await codeEditor(page, '"replicas": 5');
    assert.equal(await hint.count(), 0, 'not shown again after a reload');
    assert.deepEqual(problems, []);
    await context.close();
  }

  // Dismissed with the keyboard alone: Tab reaches its button, Enter closes it, for good.
  const { page, context, problems } = await openPage(browser, server.url);
  await codeEditor(page);
  const dismiss = page.getByRole('button', { name: 'Dismiss hint' });
  for (let i = 0; i < 60 && !(await dismiss.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press('Tab');
  }
  assert.equal(await dismiss.evaluate((el) => el === document.activeElement), true, 'Tab reaches the hint');
  await page.keyboard.press('Enter');
  await dismiss.waitFor({ state: 'detached' });
  await page.reload();
  await codeEditor(page);
  assert.equal(await dismiss.count(), 0, 'not shown again');
  assert.deepEqual(problems, []);
  await context.close();
});
