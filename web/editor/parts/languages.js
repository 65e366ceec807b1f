// A part of the editor bundle (web/editor/build.mjs): the JSON and YAML languages. It exports the
// names codemirror.js imports from these packages (so the bundle keeps nothing else), and
// evaluating it evaluates them.
export { json } from '@codemirror/lang-json';
export { yaml } from '@codemirror/lang-yaml';
