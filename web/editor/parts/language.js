// A part of the editor bundle (web/editor/build.mjs): syntax trees, highlighting, folding. It
// exports the names codemirror.js imports from these packages (so the bundle keeps nothing else),
// and evaluating it evaluates them.
export {
  HighlightStyle, syntaxHighlighting, bracketMatching, indentOnInput, foldGutter, foldKeymap,
} from '@codemirror/language';
export { tags as t } from '@lezer/highlight';
