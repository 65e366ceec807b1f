// The Web Worker that keeps a long session's checkpoint (web/checkpoint.js says when and why).
// It runs the second module (web/terminal-build.mjs, with the `checkpoint` feature), whose
// `SessionCheckpointer` (crates/web/src/platform/checkpointer.rs) follows the saved session,
// performing only the actions it has not seen (from the stored checkpoint when it fits, else
// from the shipped checkpoint of the large starter when its session began there, else from the
// seed), and answers the checkpoint to store. The page may send sessions faster than
// they are replayed: only the newest waiting one is taken. Each reply says whether another is
// waiting (`busy`), so the page stops an idle worker.
import { read, shipped, write } from './checkpoint.js';

let checkpointer = null;
let next = null;
let running = false;

addEventListener('message', ({ data }) => {
  next = data;
  if (!running) run();
});

async function load({ js, wasm }) {
  const bindings = await import(js);
  await bindings.default({ module_or_path: wasm });
  return new bindings.SessionCheckpointer();
}

/** Whether the saved workspace is a large starter's session (a broken one is refused later). */
function largeStarter(workspace) {
  try {
    return JSON.parse(workspace).starter === 'large';
  } catch {
    return false;
  }
}

async function run() {
  running = true;
  while (next) {
    const job = next;
    next = null;
    const reply = { build: job.build, generation: job.generation };
    try {
      let stored = null;
      let starter = null;
      if (!checkpointer) {
        checkpointer = await load(job);
        stored = await read(job.build).catch(() => null);
        if (!stored && job.shipped && largeStarter(job.workspace)) {
          starter = await shipped(job.shipped).catch(() => null);
        }
      }
      const made = checkpointer.update(job.workspace, stored, starter);
      stored = null;
      starter = null;
      // Stored, or the one stored was the same: either way it is not made again.
      const wrote = made ? await write({ build: job.build, ...made }) : false;
      if (made) checkpointer.confirm();
      Object.assign(reply, { stored: made ? made.steps : null, wrote });
    } catch (e) {
      // A refused session is a string; anything else (a trap) leaves the module unusable.
      if (typeof e !== 'string') checkpointer = null;
      reply.error = String(e?.message ?? e);
    }
    postMessage({ ...reply, busy: next !== null });
  }
  running = false;
}
