// Prints the release bundle's sizes (raw, gzip -9, brotli q11) for wasm, JS and CSS in dist/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, extname } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

const dist = process.argv[2] ?? 'dist';
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const rows = [];
const totals = { raw: 0, gzip: 0, brotli: 0 };
for (const name of readdirSync(dist).sort()) {
  const ext = extname(name);
  if (!['.wasm', '.js', '.css', '.html'].includes(ext)) continue;
  const body = readFileSync(join(dist, name));
  const gzip = gzipSync(body, { level: 9 }).length;
  const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  rows.push([ext.slice(1), name, body.length, gzip, brotli]);
  totals.raw += body.length; totals.gzip += gzip; totals.brotli += brotli;
}
if (!rows.some((r) => r[0] === 'wasm')) {
  console.error(`sizes: no .wasm in ${dist}`);
  process.exit(1);
}
console.log('kind  file                                        raw          gzip         brotli');
for (const [kind, name, raw, gz, br] of rows) {
  console.log(`${kind.padEnd(5)} ${name.padEnd(42)} ${kb(raw).padStart(11)}  ${kb(gz).padStart(11)}  ${kb(br).padStart(11)}`);
}
console.log(`total ${''.padEnd(42)} ${kb(totals.raw).padStart(11)}  ${kb(totals.gzip).padStart(11)}  ${kb(totals.brotli).padStart(11)}`);
