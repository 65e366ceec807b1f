// A part of the editor bundle (web/editor/build.mjs): editing commands, undo history, lint marks.
// It exports the names codemirror.js imports from these packages (so the bundle keeps nothing
// else), and evaluating it evaluates them.
export { defaultKeymap, history, historyKeymap, isolateHistory } from '@codemirror/commands';
export { lintGutter, setDiagnostics } from '@codemirror/lint';
