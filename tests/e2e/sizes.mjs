// The release bundle's sizes (raw, gzip -9, brotli q11) per asset in dist/. The CodeMirror bundle
// (dist/editor-bundle/) loads after first paint and the terminal's module when the terminal is
// first opened: both are listed apart, outside the total. The total
// counts every page's assets (the embed poster and demo pages too; not the .br/.gz copies); the
// first-load budgets are checked in the browser, on what the playground actually fetches before
// a Step works, as sent: tests/e2e/first-load.test.mjs.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, extname, relative } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const LAZY_DIR = 'editor-bundle';
// The module with the kubectl terminal (web/terminal-build.mjs): loaded only once the terminal
// has been opened in the browser, so it is listed with the lazy files.
const TERMINAL = /^converge-web-terminal-/;
// The large starter's checkpoint (web/starter-checkpoint.mjs): fetched only by `?starter=large`,
// listed with the lazy files from the copies web/release-files.mjs compressed (20 MB at q11 takes
// 40 s).
const CHECKPOINT = /^starter-large-[0-9a-f]+\.bin$/;
const dist = process.argv[2] ?? 'dist';
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;

function files(dir) {
  // Dot-directories are trunk's staging area during a build, not part of the site.
  return readdirSync(dir).sort().filter((name) => !name.startsWith('.')).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

const first = [];
const lazy = [];
for (const path of files(dist)) {
  const ext = extname(path);
  const name = relative(dist, path);
  if (CHECKPOINT.test(name)) {
    const size = (p) => (existsSync(p) ? statSync(p).size : statSync(path).size);
    lazy.push({ kind: 'bin', name, raw: statSync(path).size, gzip: size(`${path}.gz`), brotli: size(`${path}.br`) });
    continue;
  }
  if (!['.wasm', '.js', '.css', '.html', '.svg'].includes(ext)) continue;
  const body = readFileSync(path);
  const row = {
    kind: ext.slice(1),
    name,
    raw: body.length,
    gzip: gzipSync(body, { level: 9 }).length,
    brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
  (name.startsWith(`${LAZY_DIR}/`) || TERMINAL.test(name) ? lazy : first).push(row);
}
if (!first.some((r) => r.kind === 'wasm')) {
  console.error(`sizes: no .wasm in ${dist}`);
  process.exit(1);
}
const line = (kind, name, raw, gz, br) =>
  `${kind.padEnd(5)} ${name.padEnd(52)} ${kb(raw).padStart(11)}  ${kb(gz).padStart(11)}  ${kb(br).padStart(11)}`;
const sum = (rows, k) => rows.reduce((s, r) => s + r[k], 0);
console.log(`${'kind'.padEnd(5)} ${'file (all pages, eager)'.padEnd(52)} ${'raw'.padStart(11)}  ${'gzip'.padStart(11)}  ${'brotli'.padStart(11)}`);
for (const r of first) console.log(line(r.kind, r.name, r.raw, r.gzip, r.brotli));
const total = { raw: sum(first, 'raw'), gzip: sum(first, 'gzip'), brotli: sum(first, 'brotli') };
console.log(line('total', '', total.raw, total.gzip, total.brotli));
for (const r of lazy) console.log(line('lazy', r.name, r.raw, r.gzip, r.brotli));
