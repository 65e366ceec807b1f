// The checkpoint a release build ships of the large starter (`./dev build`, after
// web/terminal-build.mjs, before web/release-files.mjs; issue 20, ARCHITECTURE.md, "A checkpoint
// of a long session"). A first visit of `?starter=large` would otherwise replay its 40,000
// engine events in the tab, seconds of work: this file is that world, made once here.
//
// It runs the second module in Node exactly as web/checkpoint-worker.js runs it in a browser:
// `SessionCheckpointer.update` on the saved workspace of a fresh large starter
// (`largeStarterWorkspace`), so the bytes are what a browser's worker would store for that
// session. The file is one line of JSON, `{cut, events, steps, log}`, a newline, then the
// checkpoint's bytes; it is named by its content, and boot.js finds it in `data-starter-checkpoint`
// (its size in `data-starter-checkpoint-bytes`).
// boot.js fetches it beside the module; the app uses it only if it fits (the action log's hash,
// core's header and digest), else replays from the seed as before.
//
// Usage: node web/starter-checkpoint.mjs [dist]
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'));
const PREFIX = 'starter-large-';

const indexPath = join(dist, 'index.html');
let index = readFileSync(indexPath, 'utf8');
const attribute = (name) => index.match(new RegExp(` data-${name}="([^"]*)"`))?.[1];
const [js, wasm] = [attribute('terminal-js'), attribute('terminal-wasm')];
if (!js || !wasm) throw new Error('starter-checkpoint: index.html names no second module (run web/terminal-build.mjs)');
const base = js.match(/^(.*\/)?[^/]+$/)[1] ?? '';
const inDist = (url) => join(dist, url.slice(base.length));

const bindings = await import(pathToFileURL(inDist(js)).href);
await bindings.default({ module_or_path: readFileSync(inDist(wasm)) });
const made = new bindings.SessionCheckpointer().update(bindings.largeStarterWorkspace(), null, null);
if (!made) throw new Error('starter-checkpoint: the large starter was not worth a checkpoint');
const { bytes, ...meta } = made;
const body = Buffer.concat([Buffer.from(`${JSON.stringify(meta)}\n`), bytes]);
const name = `${PREFIX}${createHash('sha256').update(body).digest('hex').slice(0, 16)}.bin`;

for (const old of readdirSync(dist).filter((f) => f.startsWith(PREFIX))) rmSync(join(dist, old));
writeFileSync(join(dist, name), body);
index = index.replace(/ data-starter-checkpoint="[^"]*" data-starter-checkpoint-bytes="[^"]*"/, '');
// Its size lets boot.js judge from the first part of its download whether it beats the replay.
const tagged = index.replace('data-converge-boot',
  `data-converge-boot data-starter-checkpoint="${base}${name}" data-starter-checkpoint-bytes="${body.length}"`);
if (tagged === index) throw new Error('starter-checkpoint: no boot script in index.html');
writeFileSync(indexPath, tagged);
console.log(`starter-checkpoint: ${name} (${(body.length / 1024 / 1024).toFixed(1)} MiB, step ${meta.steps}, ` +
  `${meta.events} events)`);
