// Serves a release dist/ as a good static host does (`./dev preview [--port N]`), and is the
// server of every browser test (tests/e2e/harness.mjs), so the tests measure what users get:
// - the precompressed `.br`/`.gz` file the build wrote (web/release-files.mjs), chosen by
//   `Accept-Encoding`, with `Vary: Accept-Encoding`;
// - `application/wasm`, so `WebAssembly.instantiateStreaming` compiles while the bytes arrive;
// - `Cache-Control: public, max-age=31536000, immutable` on hashed file names, `no-cache` (with an
//   ETag, so a revalidation costs a 304) on everything else: index.html, boot.js, sw.js.
// sirv (the file server under Vite's and SvelteKit's preview) does the serving; this file only
// states the rules. docs/hosting.md gives the same headers for GitHub Pages, Netlify and nginx.
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sirv from 'sirv';

/** Trunk's content hash in a file name: `style-433565f30364e37d.css`, `*-<hash>_bg.wasm`. */
export const HASHED = /-[0-9a-f]{12,20}(_bg)?\.[a-z0-9]+$/;
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export function cacheControl(pathname) {
  return HASHED.test(pathname) ? IMMUTABLE : 'no-cache';
}

function files(dir) {
  return sirv(dir, {
    etag: true,
    gzip: true,
    brotli: true,
    extensions: ['html'],
    setHeaders: (res, pathname) => res.setHeader('Cache-Control', cacheControl(pathname)),
  });
}

/**
 * Serves `dir` on 127.0.0.1 (`port` 0: a free one). Resolves to { url, close, requests, serveFrom }:
 * `requests` lists what was answered ({ path, status, encoding, bytes }), and `serveFrom(dir)`
 * switches to another dist/ at the same origin, as a deploy does (the update tests).
 */
export async function preview(dir, { port = 0 } = {}) {
  let handler = files(resolve(dir));
  const requests = [];
  const server = createServer((req, res) => {
    res.on('finish', () => requests.push({
      path: new URL(req.url, 'http://x').pathname,
      status: res.statusCode,
      encoding: res.getHeader('content-encoding') ?? null,
      bytes: Number(res.getHeader('content-length') ?? 0),
    }));
    handler(req, res);
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(port, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    requests,
    serveFrom: (other) => { handler = files(resolve(other)); },
    close: () => new Promise((ok) => {
      server.close(ok);
      server.closeAllConnections();
    }),
  };
}

// `node web/preview.mjs DIST [--port N]`
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--port');
  const port = at >= 0 ? Number(args[at + 1]) : 8080;
  const dir = args.find((a, i) => !a.startsWith('--') && i !== at + 1) ?? 'dist';
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`preview: --port needs a port number, got '${args[at + 1]}'`);
    process.exit(2);
  }
  const { url } = await preview(dir, { port });
  console.log(`serving ${resolve(dir)} on ${url} (precompressed, cache headers as a host; Ctrl+C stops)`);
}
