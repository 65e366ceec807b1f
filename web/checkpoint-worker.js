// The Web Worker that keeps a long session's checkpoint (web/checkpoint.js says when and why).
// It runs the second module (web/terminal-build.mjs, with the `checkpoint` feature), whose
// `SessionCheckpointer` (crates/web/src/platform/checkpointer.rs) follows the saved session,
// performing only the actions it has not seen, and answers the checkpoint to store. The page
// may send sessions faster than they are replayed: only the newest waiting one is taken.
import { write } from './checkpoint.js';

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

async function run() {
  running = true;
  while (next) {
    const job = next;
    next = null;
    try {
      checkpointer ??= await load(job);
      const made = checkpointer.update(job.workspace);
      const wrote = made ? await write({ build: job.build, ...made }) : false;
      postMessage({ stored: made ? made.steps : null, wrote, build: job.build });
    } catch (e) {
      postMessage({ error: String(e?.message ?? e), build: job.build });
    }
  }
  running = false;
}
