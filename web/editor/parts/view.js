// A part of the editor bundle (web/editor/build.mjs): the view. It exports the names codemirror.js
// imports from these packages (so the bundle keeps nothing else), and evaluating it evaluates them.
export {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  highlightSpecialChars,
} from '@codemirror/view';
