// `./dev preview` (web/preview.mjs on the release dist/) answers as a good static host: the
// precompressed file the client accepts, application/wasm, immutable hashed files and a
// revalidated index.html. Started as ./dev starts it, on a port it picks, and asked over HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { ROOT, DIST } from './harness.mjs';

let child;
let url;
before(async () => {
  child = spawn(process.execPath, [join(ROOT, 'web', 'preview.mjs'), DIST, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise((ok, fail) => {
    child.stdout.on('data', (d) => {
      const m = String(d).match(/on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`preview exited with ${code}`)));
  });
});
after(() => child?.kill());

/** GET `path` with `headers`; resolves to { status, headers, body } with the body as sent. */
function get(path, headers = {}) {
  return new Promise((ok, fail) => {
    request(new URL(path, url), { headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', fail).end();
  });
}

const names = async () => {
  const index = await readFile(join(DIST, 'index.html'), 'utf8');
  return {
    wasm: index.match(/data-wasm="([^"]+)"/)[1],
    js: index.match(/data-js="([^"]+)"/)[1],
    css: index.match(/href="(\/style-[0-9a-f]+\.css)"/)[1],
  };
};

test('each file goes out precompressed as the client accepts it, with its type', async () => {
  const { wasm, js, css } = await names();
  const raw = await readFile(join(DIST, wasm.replace(/^\//, '')));
  const br = await get(wasm, { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-type'], 'application/wasm', 'instantiateStreaming needs application/wasm');
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.ok(brotliDecompressSync(br.body).equals(raw), 'the .br is the wasm');
  assert.ok(br.body.length < raw.length / 3, `${br.body.length} bytes brotli of ${raw.length}`);
  const gz = await get(wasm, { 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gunzipSync(gz.body).equals(raw));
  const plain = await get(wasm);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.body.length, (await stat(join(DIST, wasm.replace(/^\//, '')))).size);
  for (const [path, type] of [[js, 'text/javascript'], [css, 'text/css'], ['/', 'text/html;charset=utf-8'], ['/sw.js', 'text/javascript']]) {
    const r = await get(path, { 'accept-encoding': 'br' });
    assert.equal(r.headers['content-type'], type, path);
    assert.equal(r.headers['content-encoding'], 'br', path);
  }
  assert.equal((await get('/no-such-file.js')).status, 404);
});

test('hashed files are cached for good, the page and the worker are revalidated', async () => {
  const { wasm, js, css } = await names();
  for (const path of [wasm, js, css]) {
    assert.equal((await get(path)).headers['cache-control'], 'public, max-age=31536000, immutable', path);
  }
  for (const path of ['/', '/index.html', '/boot.js', '/sw.js', '/editor-bundle/codemirror.js']) {
    const first = await get(path, { 'accept-encoding': 'br' });
    assert.equal(first.headers['cache-control'], 'no-cache', path);
    assert.ok(first.headers.etag, `${path} has an ETag`);
    const again = await get(path, { 'accept-encoding': 'br', 'if-none-match': first.headers.etag });
    assert.equal(again.status, 304, `${path} revalidates to 304`);
    assert.equal(again.body.length, 0);
  }
  const query = await get('/?scenario=rapid-edits', { 'accept-encoding': 'br' });
  assert.equal(query.status, 200, 'a query string opens the same page');
  assert.match(brotliDecompressSync(query.body).toString(), /data-converge-boot/);
});
