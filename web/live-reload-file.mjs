// Trunk post_build hook: under `trunk serve`, Trunk appends its live-reload client to
// index.html as an inline <script>, which the page's Content-Security-Policy refuses. Move it
// to a file the policy allows ('self'). The address and path the server would have filled into
// the inline copy come from the page's own location and the public URL instead. A release
// build (`trunk build`) has no such script: nothing to do.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const staging = process.env.TRUNK_STAGING_DIR;
const base = process.env.TRUNK_PUBLIC_URL || '/';
if (!staging) {
  console.error('live-reload-file: TRUNK_STAGING_DIR is not set (run by Trunk as a hook)');
  process.exit(1);
}
const index = join(staging, 'index.html');
const html = await readFile(index, 'utf8');
const inline = /<script(?: nonce="[^"]*")?>((?:(?!<\/script>)[\s\S])*\.well-known\/trunk\/ws(?:(?!<\/script>)[\s\S])*)<\/script>/;
const found = html.match(inline);
if (found) {
  const client = found[1]
    .replaceAll("'{{__TRUNK_ADDRESS__}}'", 'window.location.host')
    .replaceAll('{{__TRUNK_WS_BASE__}}', base);
  await writeFile(join(staging, 'trunk-live-reload.js'), client);
  await writeFile(index, html.replace(found[0], `<script src="${base}trunk-live-reload.js"></script>`));
}
