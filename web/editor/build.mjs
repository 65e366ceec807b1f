// Builds the lazily loaded CodeMirror bundle: web/editor/codemirror.js and its npm dependencies
// (pinned in package-lock.json) into target/editor-bundle/, which index.html copies into
// dist/editor-bundle/. Trunk runs this as a pre_build hook; it works offline once `npm ci` has
// run. Prints the bundle's raw and gzip sizes (it is not part of the first load).
//
// The bundle is ES modules in parts, so the app can evaluate it a part per task instead of all in
// one long task (BENCHMARKS.md, issue 23): web/editor/parts/ re-exports what codemirror.js uses,
// one part per entry point (`<part>.js`; the code esbuild shares between them in
// `chunk-<hash>.js` files), then codemirror.js. The loader in crates/web/src/components/editor.rs
// imports them in the order of PARTS.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT_DIR = join(ROOT, 'target', 'editor-bundle');
const PARTS = ['state', 'view', 'language', 'extras', 'languages'];
const entryPoints = {
  ...Object.fromEntries(PARTS.map((p) => [p, join(ROOT, 'web', 'editor', 'parts', `${p}.js`)])),
  codemirror: join(ROOT, 'web', 'editor', 'codemirror.js'),
};

const result = await build({
  entryPoints,
  // V8's explicit compile hint (Chrome 136+, ignored elsewhere): compile every function of the
  // file when it is loaded, off the main thread, instead of each on its first call in the tasks
  // that create the editor, which it about halves (BENCHMARKS.md, issue 23); most of the code runs
  // while the editor is created.
  banner: { js: '//# allFunctionsCalledOnLoad' },
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  legalComments: 'eof',
  outdir: OUT_DIR,
  write: false,
  logLevel: 'warning',
  absWorkingDir: ROOT,
});

// Write only when the bytes change, so `trunk serve` sees no change and does not loop; drop the
// chunks of an earlier build.
mkdirSync(OUT_DIR, { recursive: true });
const written = new Set();
let raw = 0;
let gzip = 0;
for (const file of result.outputFiles) {
  written.add(file.path);
  raw += file.contents.length;
  gzip += gzipSync(file.contents, { level: 9 }).length;
  let old = null;
  try { old = readFileSync(file.path); } catch { /* first build */ }
  if (!old || Buffer.compare(old, Buffer.from(file.contents)) !== 0) writeFileSync(file.path, file.contents);
}
for (const name of readdirSync(OUT_DIR)) {
  if (!written.has(join(OUT_DIR, name))) rmSync(join(OUT_DIR, name), { recursive: true });
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`editor bundle (lazy) ${relative(ROOT, OUT_DIR)}/: ${result.outputFiles.length} files, ` +
  `${kib(raw)} raw, ${kib(gzip)} gzip`);
