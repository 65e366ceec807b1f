// The Content-Security-Policy in index.html: no inline script, no eval, and the app (its boot
// file, the wasm module and the lazily imported CodeMirror bundle) runs without a violation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, openPage, DIST } from './harness.mjs';

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

/** Records every securitypolicyviolation event the page sees, from its first script on. */
const recordViolations = (page) => page.addInitScript(() => {
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__violations.push(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}`);
  });
});
const violations = (page) => page.evaluate(() => window.__violations);

test('the built page declares the policy and has no inline script', async () => {
  const html = await readFile(join(DIST, 'index.html'), 'utf8');
  const policy = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1];
  assert.ok(policy, 'index.html has a CSP meta');
  const scriptSrc = policy.split(';').map((d) => d.trim()).find((d) => d.startsWith('script-src'));
  assert.equal(scriptSrc, "script-src 'self' 'wasm-unsafe-eval'");
  assert.match(policy, /object-src 'none'/);
  assert.match(policy, /base-uri 'none'/);
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)].filter(([, attrs, body]) => !/\bsrc=/.test(attrs) || body.trim());
  assert.deepEqual(inline.map(([s]) => s), [], 'every script is a file');
});

test('normal use, CodeMirror included, runs without a single violation', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { beforeGoto: recordViolations });
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  // The lazy import() of the CodeMirror bundle is allowed ('self') and replaces the textarea.
  await page.locator('.cm-editor').waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: 'Step', exact: true }).click();
  await page.getByRole('button', { name: 'Next event' }).click();
  await page.waitForFunction(() => document.querySelector('#steps')?.textContent === '4 steps');
  await page.getByRole('button', { name: 'Share' }).click();
  await page.getByLabel(/Share link/).waitFor();
  assert.deepEqual(await violations(page), []);
  assert.deepEqual(problems, []);
  await context.close();
});

test('an injected inline script and eval are refused by the policy', async () => {
  const { page, context, problems } = await openPage(browser, server.url, { plainEditor: true, beforeGoto: recordViolations });
  await page.getByRole('heading', { name: 'Converge', level: 1 }).waitFor();
  const outcome = await page.evaluate(async () => {
    const seen = new Promise((ok) => document.addEventListener('securitypolicyviolation', ok, { once: true }));
    const s = document.createElement('script');
    s.textContent = 'window.__injected = true';
    document.body.append(s);
    await seen;
    const tryIt = (f) => { try { f(); return 'ran'; } catch (e) { return e.name; } };
    return {
      injected: window.__injected === true,
      eval: tryIt(() => eval('1 + 1')),
      fn: tryIt(() => new Function('return 1')()),
    };
  });
  assert.deepEqual(outcome, { injected: false, eval: 'EvalError', fn: 'EvalError' });
  const seen = await violations(page);
  assert.ok(seen.includes('script-src-elem blocked inline'), seen.join('\n'));
  assert.ok(seen.includes('script-src blocked eval'), seen.join('\n'));
  // The browser logs each refusal as a console error; those are the only problems.
  assert.deepEqual(problems.filter((p) => !/Content Security Policy/.test(p)), []);
  await context.close();
});
