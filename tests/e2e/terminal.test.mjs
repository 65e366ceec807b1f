// The terminal pane as a person uses it: opened with its shortcut, commands typed with the
// keyboard, history on Up, Tab completion, a 403 with --as, `get -w` streaming during Play and
// stopped with Ctrl+C, `clear`, and the playground's shortcuts silent while it has focus.
// A first visit loads the app without the terminal: opening it loads the terminal's module (the
// page reloads, with the session kept) and later visits start with it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serve, launch, openPage, appReady, screenshot, axeViolations } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const T = { timeout: 60_000 };
const input = (page) => page.getByRole('textbox', { name: 'kubectl command' });
const log = (page) => page.getByRole('log', { name: 'kubectl output' });
const entries = (page) => log(page).locator('.term-entry');
/** What a person sees in a part of an entry (a <pre>'s last newline aside). */
const seen = async (loc) => (await loc.innerText()).replace(/\n$/, '');

async function open(page) {
  await page.locator('#steps').waitFor();
  // The shortcut opens it and puts the caret in its command line (on a first visit, once the
  // page has reloaded into the terminal's module).
  await page.locator('body').press('t');
  await input(page).waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => document.activeElement?.id === 'terminal-input');
}

/** Types a command with the keyboard and presses Enter; resolves once its entry is drawn. */
async function run(page, command) {
  const before = await entries(page).count();
  await input(page).pressSequentially(command);
  await input(page).press('Enter');
  await page.waitForFunction((n) => document.querySelectorAll('.term-log .term-entry').length > n, before);
  return entries(page).last();
}

test('kubectl get, scale and a 403 with --as print what kubectl prints, with exit codes', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  // What the person did before opening the terminal is still there after its module loads.
  await page.locator('body').press('n');
  await page.locator('body').press('n');
  await page.waitForFunction(() => document.getElementById('steps')?.textContent !== '0 steps');
  const stepsBefore = await page.locator('#steps').innerText();
  await open(page);
  assert.equal(await page.locator('#steps').innerText(), stepsBefore);
  const pods = await run(page, 'kubectl get deploy');
  assert.match(await seen(pods.locator('.term-out')),
    /^NAME {3}READY {3}UP-TO-DATE {3}AVAILABLE {3}AGE\nweb {4}3\/3 {5}3 {12}3 {11}\d+[smh]$/);
  assert.equal(await pods.locator('.term-exit').innerText(), 'exit 0');

  const scaled = await run(page, 'kubectl scale deploy web --replicas=5');
  assert.equal(await seen(scaled.locator('.term-out')), 'deployment.apps/web scaled');
  // The write went through the API server as the user's request: the timeline's cards show it.
  await page.getByRole('button', { name: 'Cards', exact: true }).click();
  await page.waitForFunction(() => /patch deployments\/scale default\/web 200/.test(document.querySelector('.timeline')?.textContent ?? ''));

  const denied = await run(page, `kubectl --as app patch deploy web --subresource=status --type=merge -p '{"status":{"readyReplicas":9}}'`);
  assert.equal(await seen(denied.locator('.term-err')),
    'Error from server (Forbidden): deployments.apps "web" is forbidden: User "app" cannot patch resource "deployments/status" in API group "apps" in the namespace "default"');
  assert.equal(await denied.locator('.term-exit').innerText(), 'exit 1');

  const missing = await run(page, 'kubectl get deploy nope');
  assert.equal(await seen(missing.locator('.term-err')), 'Error from server (NotFound): deployments.apps "nope" not found');
  const unknown = await run(page, 'kubectl get deploy --bogus');
  assert.equal(await seen(unknown.locator('.term-err')), "Error: unknown flag: --bogus\nSee 'kubectl get --help' for usage.");

  // Up brings the last command back; shortcuts (n steps, Space plays) are typing here.
  const steps = await page.locator('#steps').innerText();
  await input(page).press('ArrowUp');
  assert.equal(await input(page).inputValue(), 'kubectl get deploy --bogus');
  await input(page).fill('');
  await input(page).pressSequentially('n r ');
  assert.equal(await input(page).inputValue(), 'n r ');
  assert.equal(await page.locator('#steps').innerText(), steps);
  assert.equal(await page.locator('#play').innerText(), 'Play');
  await input(page).fill('');

  // Tab completes verbs, then object names.
  await input(page).pressSequentially('kubectl rol');
  await input(page).press('Tab');
  assert.equal(await input(page).inputValue(), 'kubectl rollout ');
  await input(page).pressSequentially('st');
  await input(page).press('Tab');
  await input(page).pressSequentially('deploy/w');
  await input(page).press('Tab');
  assert.equal(await input(page).inputValue(), 'kubectl rollout status deploy/web ');
  await input(page).press('Enter');
  await page.waitForFunction(() => /^Waiting for deployment (spec update to be observed|"web" rollout to finish)|successfully rolled out/.test(document.querySelector('.term-log .term-entry:last-child .term-out')?.textContent ?? ''));
  await screenshot(page, 'terminal-light');
  assert.deepEqual(await axeViolations(page), [], 'axe: the open terminal (light)');

  // An editor Apply shows the kubectl command that sends the same request; typed into the
  // terminal it reads the editor's text (-f -) and gets the same answer.
  await page.getByRole('button', { name: 'Apply' }).click();
  // (The terminal's scale made the editor's copy stale: the API server refuses it with 409.)
  await page.locator('#apply-equivalent').waitFor();
  assert.match(await page.locator('#apply-result').innerText(), /^Error from server \(Conflict\)/);
  const equivalent = await page.locator('#apply-equivalent code').innerText();
  assert.equal(equivalent, 'kubectl --as alice replace -f -');
  const again = await run(page, equivalent);
  assert.match(await seen(again.locator('.term-err')),
    /^Error from server \(Conflict\): error when replacing "STDIN": Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again$/);

  await input(page).pressSequentially('clear');
  await input(page).press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.term-log .term-entry').length === 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('kubectl get -w streams while the simulation plays, and Ctrl+C stops it', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true, colorScheme: 'dark' });
  await open(page);
  await run(page, 'kubectl scale deploy web --replicas=4');
  const watch = await run(page, 'kubectl get pods -w');
  assert.equal(await watch.locator('.term-exit').innerText(), 'watching… Ctrl+C stops');
  const first = (await seen(watch.locator('.term-out'))).split('\n').length;
  // Play from the toolbar; new rows arrive as the new pod is created, scheduled and started.
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction((n) => {
    const out = document.querySelector('.term-log .term-entry:last-child .term-out')?.textContent ?? '';
    return out.trimEnd().split('\n').length >= n + 3 && / Running /.test(out.split('\n').slice(n).join('\n'));
  }, first, T);
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await input(page).press('Control+C');
  await page.waitForFunction(() => document.querySelector('.term-log .term-entry:last-child .term-exit')?.textContent === 'exit 130');
  const rows = await seen(watch.locator('.term-out'));
  // Every streamed row keeps the first table's columns.
  const header = rows.split('\n')[0];
  assert.match(header, /^NAME +READY +STATUS +RESTARTS +AGE$/);
  const statusAt = header.indexOf('STATUS');
  for (const line of rows.split('\n').slice(1).filter((l) => l.startsWith('web-'))) {
    assert.match(line.slice(statusAt), /^\S+/, line);
  }
  await screenshot(page, 'terminal-dark');
  assert.deepEqual(await axeViolations(page), [], 'axe: the open terminal (dark)');
  assert.deepEqual(problems, []);
  await context.close();
});

test('the terminal is usable at phone width', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true, viewport: { width: 390, height: 844 } });
  await page.getByRole('button', { name: 'Terminal' }).click();
  await input(page).waitFor();
  const out = await run(page, 'kubectl get nodes');
  assert.match(await seen(out.locator('.term-out')), /^NAME +STATUS +ROLES +AGE +VERSION\nnode-1 /);
  const box = await page.locator('.term-scroll').boundingBox();
  const lineHeight = await page.locator('.term-log').evaluate((el) => parseFloat(getComputedStyle(el).lineHeight));
  assert.ok(box.height >= 6 * lineHeight, `the log shows ${box.height / lineHeight} lines`);
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(pageWidth <= 390, `the page scrolls sideways: ${pageWidth}px`);
  await screenshot(page, 'terminal-phone');
  assert.deepEqual(await axeViolations(page), [], 'axe: the open terminal (phone)');
  assert.deepEqual(problems, []);
  await context.close();
});

test('a later visit starts with the terminal, which opens at once and closes with its button', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await open(page);
  // Another tab of the same browser: the terminal is closed until asked for, then opens in place.
  const later = await context.newPage();
  await later.goto(server.url);
  await appReady(later);
  assert.equal(await input(later).count(), 0);
  const toggle = later.getByRole('button', { name: 'Terminal' });
  assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
  await later.evaluate(() => { window.stayed = true; });
  await toggle.click();
  await input(later).waitFor();
  assert.equal(await later.evaluate(() => window.stayed), true, 'the page did not reload');
  assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
  const out = await run(later, 'kubectl get deploy web -o name');
  assert.equal(await seen(out.locator('.term-out')), 'deployment.apps/web');
  await toggle.click();
  await input(later).waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await context.close();
});

test('a command is on its timeline card, and a share link carries it to the cards and the history', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true });
  await open(page);
  const command = 'kubectl scale deploy web --replicas=4';
  await run(page, command);
  await run(page, 'kubectl get deploy web -o name');
  await page.getByRole('button', { name: 'Cards', exact: true }).click();
  const card = (p) => p.locator('.lane li', { hasText: 'patch deployments/scale default/web 200' });
  assert.equal(await seen(card(page).locator('.command')), `sent by ${command}`);
  await card(page).scrollIntoViewIfNeeded();
  await screenshot(page, 'terminal-command-card');
  await page.getByRole('button', { name: 'Share' }).click();
  const url = await page.getByLabel(/Share link/).inputValue();
  const steps = await page.locator('#steps').innerText();

  // Someone else opens the link: the same cards, and the command is in the terminal's history.
  const fresh = await openPage(browser, url, { plainEditor: true });
  await fresh.page.waitForFunction((s) => document.querySelector('#steps')?.textContent === s, steps);
  await fresh.page.getByRole('button', { name: 'Cards', exact: true }).click();
  assert.equal(await seen(card(fresh.page).locator('.command')), `sent by ${command}`);
  // (Focus is on the Cards button, whose keys are its own: the toolbar's button opens it.)
  await fresh.page.getByRole('button', { name: 'Terminal' }).click();
  await input(fresh.page).waitFor({ timeout: 60_000 });
  assert.equal(await entries(fresh.page).count(), 0, 'the scrollback stayed in the first tab');
  await input(fresh.page).press('ArrowUp');
  assert.equal(await input(fresh.page).inputValue(), command, 'the read was not logged; the scale was');
  assert.deepEqual(problems, []);
  assert.deepEqual(fresh.problems, []);
  await fresh.context.close();
  await context.close();
});

test('kubectl explain prints the served schema of a field, and names a field that does not exist', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true, colorScheme: 'dark' });
  await open(page);
  // Tab completes the verb, as for the others.
  await input(page).pressSequentially('kubectl expl');
  await input(page).press('Tab');
  assert.equal(await input(page).inputValue(), 'kubectl explain ');
  await input(page).pressSequentially('deployment.status.observedGeneration');
  await input(page).press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('.term-log .term-entry').length > 0);
  const field = entries(page).last();
  const lines = (await seen(field.locator('.term-out'))).split('\n');
  assert.deepEqual(lines.slice(0, 8), [
    'GROUP:      apps', 'KIND:       Deployment', 'VERSION:    v1', '',
    'FIELD: observedGeneration <integer>', '', '', 'DESCRIPTION:',
  ]);
  // The description, wrapped at 76 columns under a four-space indent.
  const description = lines.slice(8).filter((l) => l.trim() !== '');
  assert.ok(description.every((l) => l.startsWith('    ') && l.length <= 80), description.join('\n'));
  assert.match(description.map((l) => l.trim()).join(' '),
    /^The metadata\.generation this status describes\. While it is below generation, the controller has not yet acted on the latest spec/);
  assert.equal(await field.locator('.term-exit').innerText(), 'exit 0');

  const listed = await run(page, 'kubectl explain deploy.spec.strategy');
  const text = await seen(listed.locator('.term-out'));
  assert.match(text, /^FIELD: strategy <DeploymentStrategy>$/m);
  assert.match(text, /^ {2}rollingUpdate\t<RollingUpdateDeployment>$/m);
  assert.match(text, /^ {2}type\t<string>\n {2}enum: Recreate, RollingUpdate$/m);
  await screenshot(page, 'terminal-explain-dark');

  const missing = await run(page, 'kubectl explain deployment.spec.nope');
  assert.equal(await seen(missing.locator('.term-err')), 'error: field "nope" does not exist');
  assert.equal(await missing.locator('.term-exit').innerText(), 'exit 1');
  assert.deepEqual(problems, []);
  await context.close();
});

test('lesson steps done in the terminal: kubectl scale completes a step, rollout status waits, --as app gets 403', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=scale-up`, { plainEditor: true });
  const progress = () => page.locator('#lesson-progress').innerText();
  assert.equal(await progress(), 'Step 1 of 3');
  assert.match(await page.locator('.step.current').innerText(), /kubectl scale deploy web --replicas=3/);
  await open(page);
  // The reload into the terminal's module kept the lesson open.
  assert.equal(new URL(page.url()).search, '?scenario=scale-up');
  assert.equal(await progress(), 'Step 1 of 3');
  const scaled = await run(page, 'kubectl scale deploy web --replicas=3');
  assert.equal(await seen(scaled.locator('.term-out')), 'deployment.apps/web scaled');
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'Step 2 of 3');
  assert.equal(await page.locator('#generation').innerText(), '2');
  const rollout = await run(page, 'kubectl rollout status deploy/web');
  assert.equal(await rollout.locator('.term-exit').innerText(), 'watching… Ctrl+C stops');
  await page.getByRole('button', { name: 'Play', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('#lesson-progress')?.textContent === 'Lesson complete'
    || /successfully rolled out/.test(document.querySelector('.term-log .term-entry:last-child .term-out')?.textContent ?? ''), null, T);
  await page.waitForFunction(() => document.querySelector('.term-log .term-entry:last-child .term-exit')?.textContent === 'exit 0', null, T);
  const lines = (await seen(rollout.locator('.term-out'))).split('\n');
  assert.equal(lines.at(-1), 'deployment "web" successfully rolled out');
  assert.ok(lines.some((l) => /^Waiting for deployment "web" rollout to finish: \d of 3 updated replicas are available\.\.\.$/.test(l)), lines.join('\n'));
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  assert.deepEqual(problems, []);
  await context.close();
});

test('the status-protection lesson: the reader forges status from the terminal and RBAC refuses it', async () => {
  const { page, context, problems } = await openPage(browser, `${server.url}?scenario=status-protection`, { plainEditor: true });
  assert.match(await page.locator('.step.current').innerText(), /kubectl --as app patch deploy web --subresource=status/);
  await open(page);
  const denied = await run(page, `kubectl --as app patch deploy web --subresource=status --type=merge -p '{"status":{"readyReplicas":0}}'`);
  assert.equal(await seen(denied.locator('.term-err')),
    'Error from server (Forbidden): deployments.apps "web" is forbidden: User "app" cannot patch resource "deployments/status" in API group "apps" in the namespace "default"');
  assert.equal(await denied.locator('.term-exit').innerText(), 'exit 1');
  // The refused request is the reader's, in app's lane of the timeline, before the scenario's own
  // forgery at 10s.
  await page.getByRole('button', { name: 'Cards', exact: true }).click();
  await page.waitForFunction(() => /patch deployments\/status default\/web 403/.test(
    [...document.querySelectorAll('.timeline .lane')].find((l) => /user:app/.test(l.textContent))?.textContent ?? ''));
  assert.equal(await page.locator('#clock').innerText(), 't=0.000s');
  assert.equal(await page.locator('#lesson-progress').innerText(), 'Step 1 of 3');
  assert.deepEqual(problems, []);
  await context.close();
});
