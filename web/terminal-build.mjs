// The second module of a release build (`./dev build`, after `trunk build --release`, before
// web/release-files.mjs): the app with the kubectl terminal (crates/web's `terminal` feature).
// Trunk builds the first visit's module without it, since the terminal links core's `rest` and
// `kubectl` (about 40 KB brotli) and the first load has no room for them. This builds the same
// crate with the feature through the same tools Trunk uses (cargo, wasm-bindgen, wasm-opt -Oz),
// names the files by their content as Trunk does, and tells boot.js where they are
// (`data-terminal-js`, `data-terminal-wasm` on its script). boot.js loads this module once the
// terminal has been opened in the browser (ARCHITECTURE.md, "First load").
//
// Usage: node web/terminal-build.mjs [dist]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'));
const target = resolve(process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target'));
const out = join(target, 'terminal-build');
const NAME = 'converge-web-terminal';

const run = (cmd, args) => execFileSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  .toString();

// cargo: the artifact's path from its JSON messages (the feature build shares the target
// directory, and its own fingerprint, with Trunk's).
const messages = run('cargo', ['build', '--profile', 'wasm-release', '--locked', '--target', 'wasm32-unknown-unknown',
  '-p', 'converge-web', '--bin', 'converge-web', '--features', 'terminal,checkpoint',
  '--message-format=json-render-diagnostics']);
const wasmIn = messages.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  .filter((m) => m.reason === 'compiler-artifact' && m.target?.name === 'converge-web')
  .flatMap((m) => m.filenames).find((f) => f.endsWith('.wasm'));
if (!wasmIn) throw new Error('terminal-build: cargo named no converge-web.wasm');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--out-dir', out, '--out-name', NAME, wasmIn]);
const wasmOpt = join(ROOT, 'node_modules', '.bin', 'wasm-opt');
run(wasmOpt, ['-Oz', '--output', join(out, `${NAME}_bg.opt.wasm`), join(out, `${NAME}_bg.wasm`)]);

const js = readFileSync(join(out, `${NAME}.js`));
const wasm = readFileSync(join(out, `${NAME}_bg.opt.wasm`));
const hash = createHash('sha256').update(js).update(wasm).digest('hex').slice(0, 16);
const jsName = `${NAME}-${hash}.js`;
const wasmName = `${NAME}-${hash}_bg.wasm`;
// The glue imports the same wasm-bindgen snippets as Trunk's module: they must be in dist.
for (const snippet of js.toString().matchAll(/from '\.\/(snippets\/[^']+)'/g)) {
  if (!existsSync(join(dist, snippet[1]))) {
    throw new Error(`terminal-build: ${snippet[1]} is not in ${dist}`);
  }
}
writeFileSync(join(dist, jsName), js);
writeFileSync(join(dist, wasmName), wasm);

const indexPath = join(dist, 'index.html');
let index = readFileSync(indexPath, 'utf8');
const base = index.match(/data-js="([^"]*\/)?[^"/]+\.js"/)?.[1] ?? '';
index = index.replace(/ data-terminal-js="[^"]*" data-terminal-wasm="[^"]*"/, '');
const tagged = index.replace('data-converge-boot',
  `data-converge-boot data-terminal-js="${base}${jsName}" data-terminal-wasm="${base}${wasmName}"`);
if (tagged === index) throw new Error('terminal-build: no boot script in index.html');
writeFileSync(indexPath, tagged);
console.log(`terminal-build: ${wasmName} (${(wasm.length / 1024).toFixed(0)} KiB) and ${jsName}`);
