// The gallery's scenario texts for the playground (a Trunk pre_build hook, like the editor
// bundle): target/gallery/gallery.json, an object of gallery id to the text of
// tests/scenarios/<id>.yaml, in the order of core's `gallery!` list
// (crates/core/src/scenario/gallery.rs). index.html copies it into dist/. The browser's module
// fetches it instead of carrying the texts (crates/web/src/state/gallery.rs); web/boot.js
// fetches it before the app starts when the address names a gallery scenario.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = readFileSync(join(ROOT, 'crates/core/src/scenario/gallery.rs'), 'utf8');
const list = source.match(/^gallery!\[([^\]]*)\];/m)?.[1];
if (!list) throw new Error('gallery-bundle: no gallery![...] list in crates/core/src/scenario/gallery.rs');
const ids = [...list.matchAll(/"([a-z0-9-]+)"/g)].map((m) => m[1]);
const texts = Object.fromEntries(ids.map((id) => [id, readFileSync(join(ROOT, 'tests/scenarios', `${id}.yaml`), 'utf8')]));
const out = join(ROOT, 'target', 'gallery');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'gallery.json'), JSON.stringify(texts));
