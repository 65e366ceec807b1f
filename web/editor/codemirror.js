// The lazily loaded half of the spec editor: CodeMirror 6 behind the small API that
// crates/web/src/components/editor.rs drives. Built by web/editor/build.mjs into ES modules that
// the app imports after its first render, one task each; nothing here runs on first load.
//
// An editor is made in two tasks, so neither holds the main thread long (BENCHMARKS.md, issue 23):
// prepareEditor(options, onChange, onApply) builds its state and returns a draft;
// draft.mount() builds the view apart from the document (so building it invalidates no style of
// the page) and returns a handle:
//   attach(parent)          puts the view in `parent` (still hidden, shown with it)
//   takeOver(text, selection, focus)  once shown: the textarea's text, caret and focus
//   setValue(text)          replace the document (kept in undo history; does not call onChange)
//   setDiagnostics(list)    [{ line, column, message }], 1-based, shown as lint marks
//   setLanguage("json" | "yaml"), setReadonly(bool), focus(), destroy()
import { Annotation, Compartment, EditorState, Prec, Transaction } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
  highlightSpecialChars,
} from '@codemirror/view';
import {
  HighlightStyle, syntaxHighlighting, bracketMatching, indentOnInput, foldGutter, foldKeymap,
} from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { defaultKeymap, history, historyKeymap, isolateHistory } from '@codemirror/commands';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';

/** Marks transactions that come from the app (a new object, Format), not from the user. */
const fromApp = Annotation.define();

const languages = { json, yaml };

// Colours come from web/style.css's variables, so one style reads in the light and dark themes
// (and follows [data-theme] on <html>) without a second CodeMirror theme.
const highlight = HighlightStyle.define([
  { tag: t.propertyName, color: 'var(--accent)' },
  { tag: [t.string, t.special(t.string)], color: 'var(--ok)' },
  { tag: [t.number, t.integer, t.float], color: 'var(--warn)' },
  { tag: [t.bool, t.null, t.atom, t.keyword], color: 'var(--bad)' },
  { tag: [t.comment, t.lineComment, t.blockComment], color: 'var(--muted)', fontStyle: 'italic' },
  { tag: [t.punctuation, t.separator, t.bracket, t.squareBracket, t.brace], color: 'var(--muted)' },
  { tag: [t.meta, t.typeName, t.labelName, t.processingInstruction], color: 'var(--muted)' },
  { tag: t.invalid, color: 'var(--bad)', textDecoration: 'underline wavy' },
]);

const mix = (v, pct) => `color-mix(in srgb, var(${v}) ${pct}%, transparent)`;

const theme = EditorView.theme({
  '&': {
    color: 'var(--text)', backgroundColor: 'var(--code-bg)',
    border: '1px solid var(--border)', borderRadius: '6px',
    fontSize: '13px', maxHeight: '70vh',
  },
  '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '2px' },
  '.cm-scroller': {
    overflow: 'auto', lineHeight: '1.5',
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
  },
  '.cm-content, .cm-gutter': { minHeight: 'clamp(14rem, 45vh, 24rem)' },
  '.cm-content': { caretColor: 'var(--text)' },
  '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
  '.cm-gutters': {
    backgroundColor: 'var(--code-bg)', color: 'var(--muted)',
    borderRight: '1px solid var(--border)', borderRadius: '6px 0 0 6px',
  },
  '.cm-activeLine': { backgroundColor: mix('--accent', 7) },
  '.cm-activeLineGutter': { backgroundColor: mix('--accent', 12), color: 'var(--text)' },
  '.cm-selectionBackground, ::selection': { backgroundColor: `${mix('--accent', 22)} !important` },
  '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground': {
    backgroundColor: `${mix('--accent', 30)} !important`,
  },
  '&.cm-focused .cm-matchingBracket': { backgroundColor: mix('--ok', 25), outline: `1px solid ${mix('--ok', 60)}` },
  '&.cm-focused .cm-nonmatchingBracket': { backgroundColor: mix('--bad', 25) },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--text)', border: '1px solid var(--border)' },
  '.cm-diagnostic-error': { borderLeftColor: 'var(--bad)' },
  '.cm-foldPlaceholder': { backgroundColor: 'var(--bg)', border: '1px solid var(--border)', color: 'var(--muted)' },
});

/** 1-based line/column to a document range: the character there, clipped to the document. */
function range(doc, line, column) {
  const l = doc.line(Math.min(Math.max(1, line | 0), doc.lines));
  const from = l.from + Math.min(Math.max(0, (column | 0) - 1), l.length);
  return { from, to: Math.min(from + 1, l.to) };
}

function toDiagnostics(doc, list) {
  return Array.from(list ?? [], (d) => ({ ...range(doc, d.line, d.column), severity: 'error', message: String(d.message) }));
}

function editability(readonly) {
  return [EditorState.readOnly.of(!!readonly), EditorView.editable.of(!readonly)];
}

/**
 * options: { doc, language, readonly, diagnostics, contentAttributes }.
 * onChange(text) is called for every user edit, onApply() for Ctrl/Cmd+Enter.
 */
export function prepareEditor(options, onChange, onApply) {
  const language = new Compartment();
  const editable = new Compartment();
  const attributes = new Compartment();
  const attributesFor = (list) => EditorView.contentAttributes.of({
    // tabindex: the content is in the Tab order already (contenteditable), also when read-only,
    // and says so, so its scroller counts as reachable (axe's scrollable-region-focusable).
    tabindex: '0', ...(options.contentAttributes ?? {}), 'aria-invalid': String(!!list?.length),
  });
  const state = EditorState.create({
    doc: String(options.doc ?? ''),
    extensions: [
      // Ctrl/Cmd+Enter applies; it must beat defaultKeymap's insertBlankLine.
      Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { onApply(); return true; }, preventDefault: true }])),
      lineNumbers(),
      foldGutter(),
      lintGutter(),
      highlightActiveLineGutter(),
      highlightSpecialChars(),
      history(),
      drawSelection(),
      indentOnInput(),
      bracketMatching(),
      highlightActiveLine(),
      syntaxHighlighting(highlight),
      // No indentWithTab: Tab and Shift+Tab keep moving focus (indent with Ctrl+] / Ctrl+[).
      keymap.of([...defaultKeymap, ...historyKeymap, ...foldKeymap]),
      // Escape, when nothing in the editor takes it (defaultKeymap's simplifySelection goes
      // first), leaves the editor: the page's single-key shortcuts work again.
      keymap.of([{ key: 'Escape', run: (v) => { v.contentDOM.blur(); return true; } }]),
      language.of((languages[options.language] ?? json)()),
      editable.of(editability(options.readonly)),
      attributes.of(attributesFor(options.diagnostics)),
      EditorView.lineWrapping,
      theme,
      EditorView.updateListener.of((u) => {
        if (u.docChanged && !u.transactions.some((tr) => tr.annotation(fromApp))) {
          onChange(u.state.doc.toString());
        }
      }),
    ],
  });
  return {
    mount() {
      // Built apart from the document; takeOver puts it in its place.
      const view = new EditorView({ state });
      if (options.diagnostics?.length) {
        view.dispatch(setDiagnostics(view.state, toDiagnostics(view.state.doc, options.diagnostics)));
      }
      return handle(view, { language, editable, attributes, attributesFor });
    },
  };
}

function handle(view, { language, editable, attributes, attributesFor }) {
  return {
    attach(parent) { parent.append(view.dom); },
    takeOver(text, selection, focus) {
      text = String(text);
      const changes = text === view.state.doc.toString() ? undefined
        : { from: 0, to: view.state.doc.length, insert: text };
      view.dispatch({
        changes,
        selection: { anchor: Math.min(Math.max(0, selection | 0), text.length) },
        // What was typed into the textarea meanwhile: the app has it, and it is not an undo step.
        annotations: [fromApp.of(true), Transaction.addToHistory.of(false)],
      });
      if (focus) view.focus();
    },
    setValue(text) {
      text = String(text);
      if (text === view.state.doc.toString()) return;
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        selection: { anchor: Math.min(view.state.selection.main.head, text.length) },
        // Its own undo step: never merged with the user's typing just before or after.
        annotations: [fromApp.of(true), isolateHistory.of('full')],
      });
    },
    setDiagnostics(list) {
      view.dispatch(setDiagnostics(view.state, toDiagnostics(view.state.doc, list)));
      view.dispatch({ effects: attributes.reconfigure(attributesFor(list)) });
    },
    setLanguage(name) {
      view.dispatch({ effects: language.reconfigure((languages[name] ?? json)()) });
    },
    setReadonly(readonly) {
      view.dispatch({ effects: editable.reconfigure(editability(readonly)) });
    },
    focus() { view.focus(); },
    destroy() { view.destroy(); },
  };
}
