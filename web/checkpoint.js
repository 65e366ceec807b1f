// A long session's checkpoint, kept in IndexedDB for the next visit (issue 20; ARCHITECTURE.md,
// "A checkpoint of a long session"). A reload replays the session's actions from its seed, which
// takes seconds for a large world. So once the app says a saved session is worth it
// (`converge-saved`, crates/web/src/state/checkpoint.rs), web/boot.js hands it here, and a Web
// Worker (web/checkpoint-worker.js) running the second module (with the `checkpoint` feature,
// web/terminal-build.mjs) replays it off the main thread and stores core's checkpoint of the
// world. The next visit's boot.js reads it back before the app starts and loads that module,
// which uses it only if it fits the saved session (the action log's hash) and else replays
// from the seed as before.
//
// One record, the newest long session's: a checkpoint of the large starter is about 21 MB.
// The worker imports this file too, for `read`, `write` and `shipped`.

const DB = 'converge';
const STORE = 'checkpoints';
const RECORD = 'session';
/** The same record without its bytes, to compare with cheaply. */
const META = 'session-meta';
/** localStorage: the module that wrote the stored checkpoint (boot.js loads it when it is this build's). */
const FLAG = 'converge.checkpoint';
/** localStorage: the starter's session, the only kind that is checkpointed. */
const WORKSPACE = 'converge.workspace';
/** How long the page is quiet after a save before the worker gets the session. */
const QUIET_MS = 1000;

function done(request) {
  return new Promise((ok, fail) => {
    request.onsuccess = () => ok(request.result);
    request.onerror = () => fail(request.error);
  });
}

/** Runs `f` on the store in one transaction; resolves with its request's result once committed. */
async function inStore(mode, f) {
  const open = indexedDB.open(DB, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(STORE);
  const db = await done(open);
  try {
    const tx = db.transaction(STORE, mode);
    const committed = new Promise((ok, fail) => {
      tx.oncomplete = ok;
      tx.onerror = () => fail(tx.error);
      tx.onabort = () => fail(tx.error ?? new Error('the checkpoint transaction was aborted'));
    });
    const result = await done(f(tx.objectStore(STORE)));
    await committed;
    return result;
  } finally {
    db.close();
  }
}

/** The stored checkpoint if the module `build` wrote it, else null. */
export async function read(build) {
  const record = await inStore('readonly', (store) => store.get(RECORD));
  return record?.build === build ? record : null;
}

/**
 * Stores the worker's checkpoint, `{build, cut, events, steps, log, bytes}`, in place of any
 * other, unless the stored one is of the same build and action log (a page that reloaded from
 * it checkpoints the same world again): answers whether it wrote.
 */
export async function write(record) {
  const { bytes, ...meta } = record;
  const same = (m) => m && m.build === meta.build && m.cut === meta.cut && m.log === meta.log;
  if (same(await inStore('readonly', (store) => store.get(META)))) return false;
  await inStore('readwrite', (store) => {
    store.put(record, RECORD);
    return store.put(meta, META);
  });
  return true;
}

/**
 * The large starter's checkpoint a release build ships (web/starter-checkpoint.mjs: a line of
 * JSON, `{cut, events, steps, log}`, then the bytes), as a record like a stored one; null when it
 * cannot be had.
 */
export async function shipped(url) {
  const response = await fetch(new URL(url, globalThis.document?.baseURI ?? location.href));
  if (!response.ok) return null;
  const all = new Uint8Array(await response.arrayBuffer());
  const line = all.indexOf(10);
  if (line < 0) return null;
  const meta = JSON.parse(new TextDecoder().decode(all.subarray(0, line)));
  return { ...meta, bytes: all.subarray(line + 1) };
}

/** Deletes the stored checkpoint (the session it was of is gone, or it is another build's). */
export function forget() {
  generation += 1; // a reply to a session sent before is not stored
  return inStore('readwrite', (store) => {
    store.delete(META);
    return store.delete(RECORD);
  });
}

/** How long the worker is kept with no session to follow before it is stopped (it holds a world). */
const IDLE_MS = 30_000;
let worker = null;
let quiet = 0;
let idle = 0;
let generation = 0;

/**
 * The page saved a session worth a checkpoint: the worker gets it once the page has been quiet.
 * `shipped`: whether the worker may fetch the checkpoint the build ships (boot.js says not on a
 * link too slow for it).
 */
export function saved(boot, { shipped = true } = {}) {
  clearTimeout(quiet);
  quiet = setTimeout(() => send(boot, shipped), QUIET_MS);
}

function started() {
  try {
    const w = new Worker(new URL('checkpoint-worker.js', import.meta.url), { type: 'module' });
    w.addEventListener('message', ({ data }) => {
      if (data.generation !== generation) {
        // Forgotten meanwhile: what it stored is not of the session any more.
        if (data.wrote) forget().catch(() => {});
      } else if (data.stored != null) {
        try {
          localStorage.setItem(FLAG, data.build);
        } catch {
          // no storage: boot.js will not look for it
        }
      }
      if (data.error) console.warn(`Converge: no checkpoint of this session was kept (${data.error}).`);
      if (!data.busy) {
        clearTimeout(idle);
        idle = setTimeout(() => {
          w.terminate();
          if (worker === w) worker = null;
        }, IDLE_MS);
      }
      dispatchEvent(new CustomEvent('converge-checkpoint', { detail: data }));
    });
    return w;
  } catch {
    return null; // no module workers here: reloads replay from the seed
  }
}

function send(boot, shipped) {
  let workspace = null;
  try {
    workspace = localStorage.getItem(WORKSPACE);
  } catch {
    return; // no storage: nothing to reload either
  }
  if (!workspace) return;
  worker ??= started();
  if (!worker) return;
  clearTimeout(idle);
  const url = (name) => new URL(name, document.baseURI).href;
  worker.postMessage({
    js: url(boot.dataset.terminalJs),
    wasm: url(boot.dataset.terminalWasm),
    build: boot.dataset.terminalWasm,
    // The large starter's session can go on from the checkpoint the build ships.
    shipped: shipped && boot.dataset.starterCheckpoint ? url(boot.dataset.starterCheckpoint) : null,
    workspace,
    generation,
  });
}
