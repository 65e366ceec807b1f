// Starts the wasm app. Trunk's default loader is an inline <script type="module">, which the
// page's Content-Security-Policy (script-src 'self') refuses; Trunk.toml's `pattern_script`
// puts this file in its place, with the hashed file names in data attributes.
//
// Until the app has drawn itself, index.html shows the playground's frame with its controls
// disabled and "Starting the simulator…"; the app's first render (`converge-ready`) replaces it.
// A release build also has a service worker (web/sw.js, `data-sw` on this script): registered
// once the app and its editor are loaded, it keeps this build for offline visits, and says so
// when a newer build is ready. ARCHITECTURE.md, "First load".
const boot = document.querySelector('script[data-converge-boot]');
const skeleton = () => document.querySelector('.boot-skeleton');

/** A line at the bottom of the page (role `status`, or `alert` for a failure). */
function notice(text, { role = 'status', className = '' } = {}) {
  const p = document.createElement('p');
  p.className = `boot-status ${className}`.trim();
  p.setAttribute('role', role);
  p.textContent = text;
  document.body.append(p);
  return p;
}

// When the editor bundle has been fetched (or was never going to be), so the worker's install
// takes it from the HTTP cache instead of downloading it a second time: the editor's loader
// (crates/web/src/components/editor.rs) says so with `converge-editor-settled`.
function editorSettled() {
  return new Promise((ok) => {
    addEventListener('converge-editor-settled', () => ok(), { once: true });
    setTimeout(ok, 10_000);
  });
}

/** The worker in `reg` waiting to take over: offer the reload that switches to its build. */
function offerUpdate(reg) {
  if (!reg.waiting || !navigator.serviceWorker.controller || document.querySelector('.update-ready')) return;
  const line = notice('A new version is ready.', { className: 'update-ready' });
  const reload = document.createElement('button');
  reload.textContent = 'Reload';
  // The page reloads once the new worker controls it, so every file comes from one build.
  reload.addEventListener('click', () => reg.waiting?.postMessage('skip-waiting'));
  line.append(reload);
}

async function registerWorker() {
  if (!boot.dataset.sw || !('serviceWorker' in navigator)) return;
  await editorSettled();
  const reg = await navigator.serviceWorker.register(new URL(boot.dataset.sw, document.baseURI));
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (document.querySelector('.update-ready')) location.reload();
  });
  offerUpdate(reg);
  reg.addEventListener('updatefound', () => {
    const next = reg.installing;
    next?.addEventListener('statechange', () => next.state === 'installed' && offerUpdate(reg));
  });
}

/**
 * Resolves once the skeleton's first paint has been presented (its largest-contentful-paint
 * entry; two frames where the browser has no such entry), at most 200 ms. The module's first
 * tasks hold the main thread for a while: started before that, they kept the painted frame from
 * being presented, and Chromium then counted no paint of the skeleton at all (BENCHMARKS.md,
 * session 8). The wasm's download starts after it too (Trunk.toml, pattern_preload).
 */
function skeletonShown() {
  return new Promise((ok) => {
    if (PerformanceObserver.supportedEntryTypes?.includes('largest-contentful-paint')) {
      // (The observer's callback is a task of its own; no timer, which a test's fake clock stops.)
      new PerformanceObserver(() => ok()).observe({ type: 'largest-contentful-paint', buffered: true });
    } else {
      requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(ok, 0)));
    }
    setTimeout(ok, 200);
  });
}

// The app is shown (crates/web/src/app.rs, Drawn): in its task, so no frame shows both.
addEventListener('converge-shown', () => skeleton()?.remove(), { once: true });
addEventListener('converge-ready', () => {
  registerWorker().catch(() => {}); // no worker: the page works, only not offline
}, { once: true });
// A panic: the app's panic panel (crates/web/src/platform/panic_panel.rs) explains it.
addEventListener('converge-panic', () => skeleton()?.remove(), { once: true });

/** localStorage, or null where the browser refuses it. */
function stored(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

// The starter's session was saved. A long one gets a checkpoint (web/checkpoint.js), kept by a
// worker running the second module, which only a release build has; a short one, or another
// build's checkpoint, is forgotten.
const CHECKPOINT = 'converge.checkpoint';
addEventListener('converge-saved', () => {
  if (!boot.dataset.terminalWasm || !globalThis.Worker || !globalThis.indexedDB) return;
  // The worker may go on from the shipped checkpoint, unless fetching it is not worth it here.
  const shipped = !slowConnection() && !gaveUpShipped;
  import('./checkpoint.js').then((c) => c.saved(boot, { shipped }), () => {});
});
function forgetCheckpoint() {
  if (stored(CHECKPOINT) === null) return;
  try {
    localStorage.removeItem(CHECKPOINT);
  } catch {
    return;
  }
  if (globalThis.indexedDB) import('./checkpoint.js').then((c) => c.forget(), () => {});
}
addEventListener('converge-saved-short', forgetCheckpoint);
// The app was offered one that does not fit its session or could not be read.
addEventListener('converge-checkpoint-unused', forgetCheckpoint);

/**
 * Whether to load the second module (web/terminal-build.mjs, with the kubectl terminal and the
 * checkpoint's reader), when this build has one: once the terminal has been opened in this
 * browser (the app keeps `converge.build`), when this module stored a checkpoint of the
 * session (web/checkpoint.js), or for the large starter, whose checkpoint the build ships.
 * A first visit loads the smaller module without them.
 */
const second = boot.dataset.terminalWasm;
const checkpointed = !!second && stored(CHECKPOINT) === second;
if (!checkpointed) addEventListener('converge-ready', forgetCheckpoint, { once: true });
// Only a starter session can use one: not a lesson, an embed or a share link.
const query = new URLSearchParams(location.search);
const starterSession = !query.has('embed') && !query.has('scenario');
const shareLink = location.hash.startsWith('#w');
// `?starter=large` opens a fresh large starter whatever is saved (the app tests the address the
// same way, crates/web/src/state/boot.rs `opens_fresh_large`, and then drops it from the
// address), so a stored checkpoint is of no use then.
const largeAddress = location.search.includes('starter=large');
const useCheckpoint = checkpointed && starterSession && !shareLink && !largeAddress;
// The large starter opens from the checkpoint the release ships (web/starter-checkpoint.mjs):
// fresh, or saved with no checkpoint of its own yet (the app replays from the seed when the
// session does not fit it).
const wantsShipped = !!second && !!boot.dataset.starterCheckpoint && starterSession && !useCheckpoint
  && (largeAddress || (!shareLink && savedLarge())) && !slowConnection();
const wantsTerminal = stored('converge.build') === 'terminal';
let wantsSecond = !!second && (wantsTerminal || useCheckpoint || wantsShipped);

/** Whether the saved starter session is the large starter's (web/checkpoint-worker.js asks too). */
function savedLarge() {
  try {
    return JSON.parse(stored('converge.workspace'))?.starter === 'large';
  } catch {
    return false;
  }
}

/**
 * Whether the reader saves data or Chromium rates the connection 3G or slower
 * (`navigator.connection`; its `downlink` estimate is no guide at the start of a visit, 1.35 Mbit/s
 * on localhost): the replay is then the sooner, and fewer bytes (`SLOW_DOWNLOAD_MS` says why).
 */
function slowConnection() {
  const c = navigator.connection;
  return !!c && (c.saveData || ['slow-2g', '2g', '3g'].includes(c.effectiveType));
}

/**
 * The shipped checkpoint's download, before the module's starts: how much of it has arrived
 * (`received` of `size` bytes, as decoded) since `started`, and the means to stop it.
 */
const shippedDownload = { started: performance.now(), received: 0, size: 0, abort: new AbortController() };
/** Whether this visit gave the shipped checkpoint up: its link is too slow for it. */
let gaveUpShipped = false;

// Read beside the module's download, the stored one for at most 2 s (an IndexedDB that never
// answers does not keep the app from starting); the app takes it as it starts
// (`convergeCheckpoint`).
let checkpoint = null;
if (useCheckpoint) {
  checkpoint = Promise.race([
    import('./checkpoint.js').then((c) => c.read(second)),
    new Promise((ok) => setTimeout(ok, 2000, null)),
  ]).catch(() => null);
} else if (wantsShipped) {
  checkpoint = shipped(boot.dataset.starterCheckpoint, Number(boot.dataset.starterCheckpointBytes));
}

/**
 * The large starter's checkpoint the release ships, read as it arrives (web/starter-checkpoint.mjs
 * gives its form; the worker reads it through checkpoint.js `shipped`, without the progress), as
 * a record like a stored one; null when it cannot be had or was given up.
 */
async function shipped(url, size) {
  try {
    shippedDownload.size = size;
    const response = await fetch(new URL(url, document.baseURI), { signal: shippedDownload.abort.signal });
    if (!response.ok || !response.body) return null;
    let all = new Uint8Array(size > 0 ? size : 1 << 20);
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const at = shippedDownload.received;
      if (at + value.length > all.length) {
        const grown = new Uint8Array(Math.max(all.length * 2, at + value.length));
        grown.set(all.subarray(0, at));
        all = grown;
      }
      all.set(value, at);
      shippedDownload.received = at + value.length;
    }
    all = all.subarray(0, shippedDownload.received);
    const line = all.indexOf(10);
    if (line < 0) return null;
    const meta = JSON.parse(new TextDecoder().decode(all.subarray(0, line)));
    // `shipped`: the app neither forgets it nor calls it this browser's.
    return { ...meta, bytes: all.subarray(line + 1), shipped: true };
  } catch {
    return null;
  }
}

/** How long the shipped checkpoint downloads before boot.js judges whether it is worth it. */
const PROBE_MS = 400;
/**
 * A shipped checkpoint whose download would take longer than this is given up for the replay:
 * the second module and the file are about 1.2 MB more than the first module, for the replay's
 * 2.5-3 s of a desktop CPU, so on a link below about 4 Mbit/s the replay is the sooner
 * (BENCHMARKS.md, session 19). The file alone takes 1.7 s at that speed.
 */
const SLOW_DOWNLOAD_MS = 2000;

/**
 * Whether to give the shipped checkpoint up for the replay, judged from what arrived in its first
 * `PROBE_MS`: when it could not be had (no file, not one), when nothing of it arrived within
 * `SLOW_DOWNLOAD_MS`, or when the rest would arrive after that. Its download is then stopped.
 */
async function shippedTooSlow() {
  const judged = (ms) => Promise.race([checkpoint.then((c) => (c ? 'arrived' : 'failed')),
    new Promise((ok) => setTimeout(ok, Math.max(0, ms), 'judge'))]);
  let verdict = await judged(PROBE_MS - (performance.now() - shippedDownload.started));
  // Nothing yet (the server is slow to answer, say): look again every `PROBE_MS`.
  while (verdict === 'judge' && shippedDownload.received === 0
    && performance.now() - shippedDownload.started < SLOW_DOWNLOAD_MS) {
    verdict = await judged(PROBE_MS);
  }
  if (verdict === 'arrived') return false;
  if (verdict === 'judge') {
    const { started, received, size } = shippedDownload;
    const projected = received > 0 && size > 0 ? ((performance.now() - started) * size) / received : Infinity;
    if (projected <= SLOW_DOWNLOAD_MS) return false;
  }
  giveUpShipped();
  return true;
}

/** Stops the shipped checkpoint's download: this visit replays (or reads none) instead. */
function giveUpShipped() {
  gaveUpShipped = true;
  checkpoint = null;
  shippedDownload.abort.abort();
}

/** How long a compiled module waits for a checkpoint still on its way before it replays instead. */
const CHECKPOINT_WAIT_MS = 2000;

/** `download` compiled as it arrives (what wasm-bindgen's loader does with it). */
async function compiled(download) {
  const response = await download;
  if (!response.ok) throw new Error(`failed to fetch Wasm: ${response.status} ${response.statusText}`);
  if (response.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  return WebAssembly.compile(await response.arrayBuffer());
}

/** Fetches and starts one of the two modules. */
async function start(js, wasmUrl) {
  // The module compiles while it arrives (`compiled`, or wasm-bindgen's loader).
  const download = fetch(wasmUrl);
  const bindings = await import(js);
  // The app reads the gallery as it starts (a failed fetch leaves it unset: the app then says
  // the scenario could not be opened).
  if (gallery) globalThis.convergeGallery = (await gallery) ?? undefined;
  let module = download;
  if (checkpoint && wasmUrl === second) {
    // The module compiles while the checkpoint arrives; one that is late is not waited for long.
    module = compiled(download);
    const late = module.then(() => new Promise((ok) => setTimeout(ok, CHECKPOINT_WAIT_MS, null)));
    globalThis.convergeCheckpoint = (await Promise.race([checkpoint, late])) ?? undefined;
    // One still on its way is not waited for: a shipped one's download is stopped.
    if (!globalThis.convergeCheckpoint && wantsShipped) giveUpShipped();
    checkpoint = null; // the app's copy is the only one kept
  }
  const wasm = await bindings.default({ module_or_path: module });
  // The module is compiled and started (its first task is queued): the app's own work is what
  // follows, up to `converge-ready` (tests/e2e/engine.test.mjs, checkpoint.test.mjs).
  performance.mark('converge-module');
  return wasm;
}

/**
 * A visit whose address names a gallery scenario (`?scenario=<id>`, in embeds too) opens it at
 * once, and the module does not carry the gallery's texts: fetch them beside the module
 * (web/gallery-bundle.mjs; crates/web/src/state/gallery.rs). Other visits get them after
 * `converge-ready`, from the app.
 */
function galleryFirst() {
  const id = new URLSearchParams(location.search).get('scenario');
  if (!id || id === 'custom') return null;
  return fetch(new URL('gallery.json', document.baseURI)).then((r) => (r.ok ? r.text() : null), () => null);
}

const gallery = galleryFirst();

try {
  await skeletonShown();
  // A slow link: the first module replays the starter (unless the terminal's module is wanted).
  if (wantsShipped && await shippedTooSlow()) wantsSecond = wantsTerminal;
  // The wasm's download starts here, after the first paint (Trunk.toml, pattern_preload).
  let wasm;
  if (wantsSecond) {
    try {
      wasm = await start(boot.dataset.terminalJs, boot.dataset.terminalWasm);
    } catch (e) {
      // Offline before the terminal's module was kept, say: the smaller module has everything
      // else (and says the terminal could not be loaded). A panic is not retried.
      if (document.getElementById('panic-panel')) throw e;
      delete globalThis.convergeCheckpoint; // the smaller module cannot read it
      if (wantsShipped) giveUpShipped();
      checkpoint = null;
      wasm = await start(boot.dataset.js, boot.dataset.wasm);
    }
  } else {
    wasm = await start(boot.dataset.js, boot.dataset.wasm);
  }
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
} catch (e) {
  skeleton()?.querySelector('.boot-loading')?.remove();
  // A panic while starting: the app's panic panel explains it.
  if (document.getElementById('panic-panel')) throw e;
  // Offline before the module was cached, a cut download, no WebAssembly: say so, keep the page.
  notice(`The simulator could not start (${e?.message ?? e}). Reload the page to try again.`,
    { role: 'alert', className: 'boot-failed' });
  throw e;
}
