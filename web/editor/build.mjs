// Builds the lazily loaded CodeMirror bundle: web/editor/codemirror.js and its npm dependencies
// (pinned in package-lock.json) into target/editor-bundle/codemirror.js, which index.html copies
// into dist/editor-bundle/. Trunk runs this as a pre_build hook; it works offline once
// `npm ci` has run. Prints the bundle's raw and gzip sizes (it is not part of the first load).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT_DIR = join(ROOT, 'target', 'editor-bundle');
const OUT = join(OUT_DIR, 'codemirror.js');

const result = await build({
  entryPoints: [join(ROOT, 'web', 'editor', 'codemirror.js')],
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  legalComments: 'eof',
  write: false,
  logLevel: 'warning',
  absWorkingDir: ROOT,
});
const code = result.outputFiles[0].contents;

// Write only when the bytes change, so `trunk serve` sees no change and does not loop.
mkdirSync(OUT_DIR, { recursive: true });
let old = null;
try { old = readFileSync(OUT); } catch { /* first build */ }
if (!old || Buffer.compare(old, Buffer.from(code)) !== 0) writeFileSync(OUT, code);

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`editor bundle (lazy) ${OUT}: ${kib(code.length)} raw, ${kib(gzipSync(code, { level: 9 }).length)} gzip`);
