// The last step of a release build (`./dev build`, after `trunk build --release`): writes the
// service worker for this build (web/sw.js, with the build's name and file list) and tells
// boot.js to register it (`data-sw`), then writes a brotli (q11) and a gzip (-9) copy next to
// every text and wasm file, for a static host to send by Accept-Encoding (web/preview.mjs,
// docs/hosting.md). `trunk serve` builds have neither.
//
// Usage: node web/release-files.mjs [dist]
import { readdirSync, readFileSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.argv[2] ?? join(ROOT, 'dist'));
// (`.bin`: the large starter's checkpoint, web/starter-checkpoint.mjs, 20 MB in 0.8 MB of brotli.)
const COMPRESS = /\.(html|js|mjs|css|wasm|svg|json|txt|bin)$/;
// Pages the service worker does not keep: the embed poster and its demo stand alone.
const NOT_CACHED = /^(embed\.html|embed-demo\.html|embed\/|sw\.js$)/;
// The terminal's module (web/terminal-build.mjs) and the large starter's checkpoint
// (web/starter-checkpoint.mjs): kept once fetched, not fetched at install, so a first visit does
// not download them in the background.
const ON_DEMAND = /^(converge-web-terminal-|starter-large-)/;

function files(dir) {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith('.')) return []; // trunk's staging area
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

for (const path of files(dist)) {
  if (/\.(br|gz)$/.test(path)) rmSync(path); // from an earlier run
}

const indexPath = join(dist, 'index.html');
let index = readFileSync(indexPath, 'utf8');
const build = index.match(/data-wasm="(?:[^"]*\/)?([^"/]+)_bg\.wasm"/)?.[1];
if (!build) throw new Error('release-files: index.html names no wasm module (data-wasm)');
const names = files(dist).map((p) => relative(dist, p).split('\\').join('/'))
  .filter((name) => !NOT_CACHED.test(name));
const cached = names.filter((name) => !ON_DEMAND.test(name))
  .map((name) => (name === 'index.html' ? './' : `./${name}`));
const onDemand = names.filter((name) => ON_DEMAND.test(name)).map((name) => `./${name}`);
const worker = readFileSync(join(ROOT, 'web', 'sw.js'), 'utf8')
  .replace("'__CONVERGE_BUILD__'", () => JSON.stringify(build))
  .replace("['__CONVERGE_FILES__']", () => JSON.stringify(cached))
  .replace("['__CONVERGE_ON_DEMAND__']", () => JSON.stringify(onDemand));
writeFileSync(join(dist, 'sw.js'), worker);
if (!index.includes(' data-sw=')) {
  index = index.replace('data-converge-boot', 'data-converge-boot data-sw="sw.js"');
  if (!index.includes(' data-sw=')) throw new Error('release-files: no boot script in index.html');
  writeFileSync(indexPath, index);
}

let raw = 0;
let br = 0;
for (const path of files(dist)) {
  if (!COMPRESS.test(path)) continue;
  const body = readFileSync(path);
  const brotli = brotliCompressSync(body, { params: {
    [constants.BROTLI_PARAM_QUALITY]: 11,
    [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
  } });
  const gzip = gzipSync(body, { level: 9 });
  // A host sends the smaller form; a tiny file may not shrink at all.
  if (brotli.length < body.length) writeFileSync(`${path}.br`, brotli);
  if (gzip.length < body.length) writeFileSync(`${path}.gz`, gzip);
  raw += body.length;
  br += Math.min(brotli.length, body.length);
}
console.log(`release-files: sw.js for ${build} (${cached.length} files); ${(raw / 1024).toFixed(0)} KiB ` +
  `precompressed to ${(br / 1024).toFixed(0)} KiB brotli`);
