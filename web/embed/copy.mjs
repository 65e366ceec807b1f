// Trunk post-build hook: copies the embed poster, its scripts and the demo page into dist/
// (Trunk only bundles what index.html links; these pages stand alone).
import { cp } from 'node:fs/promises';
import { join } from 'node:path';

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('copy.mjs: TRUNK_STAGING_DIR is not set (run by trunk as a post_build hook)');
  process.exit(1);
}
await cp('web/embed.html', join(staging, 'embed.html'));
await cp('web/embed-demo.html', join(staging, 'embed-demo.html'));
await cp('web/embed', join(staging, 'embed'), {
  recursive: true,
  filter: (src) => !src.endsWith('copy.mjs'),
});
