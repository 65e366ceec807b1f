// A benchmark, not a test (`./dev e2e` runs only *.test.mjs): a CPU profile (CDP `Profiler`,
// 200 us sampling) of the large starter's 960-Pod rolling update, driven as engine.test.mjs
// drives it (the image retyped in CodeMirror, Apply, Run until converged). It prints the
// step's `converge-step` measure, the profile's split between wasm, JavaScript and the
// browser, and the 40 functions with the most self time; the profile is written to
// target/e2e/rollout.cpuprofile. BENCHMARKS.md records its figures.
//
//   ./dev build && node tests/e2e/rollout-profile.bench.mjs
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { serve, launch, openPage, applyNewImage, SHOTS } from './harness.mjs';

const server = await serve();
const browser = await launch();
const { page, context } = await openPage(browser, `${server.url}?starter=large`);
await page.waitForFunction(() => parseInt(document.querySelector('.objects .muted')?.textContent ?? '0', 10) >= 950, null, { timeout: 180_000 });
await applyNewImage(page);
const cdp = await context.newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
const before = await page.evaluate(() => performance.getEntriesByName('converge-step').length);
await cdp.send('Profiler.start');
await page.getByRole('button', { name: 'Run until converged' }).click();
await page.waitForFunction((n) => performance.getEntriesByName('converge-step').length > n, before, { timeout: 300_000 });
const { profile } = await cdp.send('Profiler.stop');
const ms = await page.evaluate(() => performance.getEntriesByName('converge-step').at(-1).duration);
await mkdir(SHOTS, { recursive: true });
await writeFile(join(SHOTS, 'rollout.cpuprofile'), JSON.stringify(profile));
// Self time by function, and by kind: wasm, JavaScript, the browser's own ((program), GC).
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const kinds = new Map();
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
profile.samples.forEach((id, i) => {
  const f = byId.get(id).callFrame;
  const t = (profile.timeDeltas[i] ?? 0) / 1000;
  const file = f.url ? f.url.split('/').pop() : '';
  add(self, `${f.functionName || '(anonymous)'} ${file}`, t);
  add(kinds, file.endsWith('.wasm') ? 'wasm' : file ? 'JavaScript' : f.functionName, t);
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const row = (v, k) => `${v.toFixed(1).padStart(8)} ms ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`;
console.log(`converge-step ${ms.toFixed(0)} ms; profiled ${total.toFixed(0)} ms`);
for (const [k, v] of [...kinds.entries()].sort((a, b) => b[1] - a[1])) console.log(row(v, k));
console.log('');
for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(row(v, k));
await context.close();
await browser.close();
await server.close();
