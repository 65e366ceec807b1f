// A benchmark, not a test (`./dev e2e` runs only *.test.mjs): the large starter's first visit
// (`?starter=large`) on the network profiles of first-load.test.mjs, CDP's
// `Network.emulateNetworkConditions` with the cache disabled, a fresh context per visit.
// It prints, per profile, `converge-ready` from navigation and which module started: the
// second one with the shipped checkpoint (web/starter-checkpoint.mjs), or the first one,
// which replays, when boot.js gave the checkpoint up. BENCHMARKS.md records its figures.
//
//   ./dev build && node tests/e2e/large-first-visit.bench.mjs [visits per profile, 3]
import { serve, launch, openPage } from './harness.mjs';

const PROFILES = [
  { name: 'no throttling' },
  { name: '9 Mbit/s, 60 ms', down: 9e6 / 8, up: 1.5e6 / 8, latency: 60 },
  { name: '1.6 Mbit/s, 150 ms', down: 1.6e6 / 8, up: 750e3 / 8, latency: 150 },
];
const VISITS = Number(process.argv[2] ?? 3);

const server = await serve();
const browser = await launch();
try {
  for (const profile of PROFILES) {
    const visits = [];
    for (let i = 0; i < VISITS; i++) {
      const modules = [];
      const { page, context } = await openPage(browser, `${server.url}?starter=large`, {
        ready: false,
        beforeGoto: async (p) => {
          p.on('request', (r) => { if (r.url().endsWith('.wasm')) modules.push(new URL(r.url()).pathname); });
          const cdp = await p.context().newCDPSession(p);
          await cdp.send('Network.enable');
          await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
          if (profile.down) {
            await cdp.send('Network.emulateNetworkConditions', {
              offline: false, latency: profile.latency, downloadThroughput: profile.down, uploadThroughput: profile.up,
            });
          }
        },
      });
      await page.waitForFunction(() => performance.getEntriesByName('converge-ready').length > 0, null,
        { timeout: 120_000 });
      const ready = await page.evaluate(() => Math.round(performance.getEntriesByName('converge-ready')[0].startTime));
      const shipped = modules.some((m) => /converge-web-terminal-/.test(m));
      visits.push(`${ready} ms (${shipped ? 'shipped checkpoint' : 'replay'})`);
      await context.close();
    }
    console.log(`${profile.name}: ${visits.join(', ')}`);
  }
} finally {
  await browser.close();
  await server.close();
}
