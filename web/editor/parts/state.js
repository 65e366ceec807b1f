// A part of the editor bundle (web/editor/build.mjs): the editor's state. It exports the names
// codemirror.js imports from these packages (so the bundle keeps nothing else), and evaluating it
// evaluates them.
export { Annotation, Compartment, EditorState, Prec, Transaction } from '@codemirror/state';
