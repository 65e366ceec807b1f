// First-load budget of issue 6, measured in the browser: every resource Chromium starts to fetch
// before the playground is interactive (the app's first render, Performance mark
// `converge-interactive`, after which its controls listen), each body compressed with gzip -9 as
// a server would send it, summed per kind (wasm, JS, CSS, HTML, other). What starts later (the
// CodeMirror bundle) is listed apart.
// The figures go to target/e2e/first-load.json for BENCHMARKS.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join, extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { serve, launch, openPage, SHOTS } from './harness.mjs';

const BUDGET_BYTES = 250_000; // "250 KB" in the issue: decimal kilobytes
// The budget is not met (BENCHMARKS.md, issue 6): until it is, growth past this bound fails the
// run, so the miss stays visible without hiding regressions. Today (2026-11-30) 628,402 bytes.
const REGRESSION_BYTES = 640_000;

let server;
let browser;
before(async () => { server = await serve(); browser = await launch(); });
after(async () => { await browser?.close(); await server?.close(); });

const kindOf = (url) => {
  const ext = extname(new URL(url).pathname).slice(1);
  return ['wasm', 'js', 'css', 'html'].includes(ext) ? ext : (ext === '' ? 'html' : 'other');
};

test('what the browser fetches before the playground is interactive, gzip, per kind', { timeout: 120_000 }, async () => {
  const bodies = new Map();
  const { page, context, problems } = await openPage(browser, server.url, {
    beforeGoto: async (p) => {
      p.on('response', (r) => {
        if (r.status() === 200) bodies.set(r.url(), r.body().catch(() => null));
      });
    },
  });
  await page.getByRole('button', { name: 'Step', exact: true }).waitFor();
  // Let lazy loads that start after first paint arrive, so they are listed (not counted).
  await page.waitForLoadState('networkidle');
  const timing = await page.evaluate(() => ({
    interactive: performance.getEntriesByName('converge-interactive')[0]?.startTime ?? null,
    resources: performance.getEntriesByType('resource').map((e) => ({ url: e.name, start: e.startTime })),
  }));
  assert.notEqual(timing.interactive, null, 'the app marks converge-interactive on its first render');
  const starts = [{ url: page.url(), start: 0 }, ...timing.resources];

  const rows = [];
  for (const { url, start } of starts) {
    const body = await bodies.get(url);
    if (!body) continue;
    rows.push({ file: new URL(url).pathname, kind: kindOf(url), early: start < timing.interactive,
      raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
  }
  const first = rows.filter((x) => x.early);
  const later = rows.filter((x) => !x.early);
  const byKind = {};
  for (const x of first) byKind[x.kind] = (byKind[x.kind] ?? 0) + x.gzip;
  const total = first.reduce((s, x) => s + x.gzip, 0);
  const report = { total_gzip: total, interactive_ms: timing.interactive, budget: BUDGET_BYTES, by_kind_gzip: byKind, first, later };
  console.log(`first load: ${total} bytes gzip (${JSON.stringify(byKind)}), ` +
    `${total <= BUDGET_BYTES ? 'within' : 'OVER'} the budget of ${BUDGET_BYTES} bytes; ` +
    `after interactive: ${later.map((x) => `${x.file} ${x.gzip}`).join(', ') || 'nothing'}`);
  await mkdir(SHOTS, { recursive: true });
  await writeFile(join(SHOTS, 'first-load.json'), JSON.stringify(report, null, 2));

  assert.ok(first.some((x) => x.kind === 'wasm'), 'the wasm module is part of the first load');
  assert.ok(!first.some((x) => x.file.includes('/editor-bundle/')),
    'the CodeMirror bundle is not fetched before the playground is interactive');
  assert.ok(total <= REGRESSION_BYTES, `first load grew to ${total} bytes gzip (bound ${REGRESSION_BYTES})`);
  assert.deepEqual(problems, []);
  await context.close();
});
