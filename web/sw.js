// The service worker of a release build (web/release-files.mjs fills in BUILD and FILES; boot.js
// registers it once the app and its editor have loaded). One cache per build, `converge-<wasm>`:
// - install copies every file of this build into it (the hashed ones come from the HTTP cache),
//   except those only some visits need (ON_DEMAND: the second module, with the terminal, and the
//   large starter's checkpoint), each kept the first time the page fetches it;
// - it answers the page's requests from that cache first, navigations with the cached
//   index.html whatever the query, so a reload with the network off opens the playground;
// - a newer build's worker waits until the page's "Reload" (message `skip-waiting`), then
//   removes the older caches. The page reloads when it takes over, so a page never gets files
//   from two builds. ARCHITECTURE.md, "First load".
const BUILD = '__CONVERGE_BUILD__';
const FILES = ['__CONVERGE_FILES__'];
const ON_DEMAND = ['__CONVERGE_ON_DEMAND__'].map((f) => new URL(f, self.registration.scope).href);
const CACHE = `converge-${BUILD}`;
const INDEX = new URL('./', self.registration.scope).href;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(FILES);
    // The server may already hold a later build: then this one is not installed.
    const page = await (await cache.match(INDEX)).text();
    if (!page.includes(BUILD)) {
      await caches.delete(CACHE);
      throw new Error(`index.html is not build ${BUILD}`);
    }
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('converge-') && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data === 'skip-waiting') self.skipWaiting();
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  const { pathname } = new URL(request.url);
  const root = new URL(INDEX).pathname;
  const app = request.mode === 'navigate' && (pathname === root || pathname === `${root}index.html`);
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    const hit = await cache.match(app ? INDEX : request, { ignoreSearch: true });
    if (hit) return hit;
    const response = await fetch(request);
    const url = new URL(request.url);
    if (response.ok && ON_DEMAND.includes(`${url.origin}${url.pathname}`)) {
      // Kept as its copy arrives, while the page reads the response as it arrives too.
      event.waitUntil(cache.put(url.href, response.clone()).catch(() => {}));
    }
    return response;
  })());
});
