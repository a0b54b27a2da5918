// The preview's editor: CodeMirror 6 with the JSON language, line numbers,
// folding, search and a lint gutter (the marks come from the module's
// verdict, set by app.js). Loaded by app.js with a dynamic import, so the
// first prompt is assembled and painted while this (the larger part of the
// page's code) is still loading.

import { EditorView, basicSetup } from "codemirror";
import { drawSelection, highlightSpecialChars, keymap, lineNumbers } from "@codemirror/view";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { searchKeymap } from "@codemirror/search";
import { INVISIBLE_RANGES } from "./element/binding.js";
import { EditorState, Compartment } from "@codemirror/state";
import { json } from "@codemirror/lang-json";
import { setDiagnostics, lintGutter } from "@codemirror/lint";
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { tags } from "@lezer/highlight";

export { setDiagnostics };

/** The characters the prompt view marks (INVISIBLE_RANGES, generated from
 * the Unicode data: docs/SPEC.md §7.8), marked in the editor too (a red
 * placeholder naming the code point), tabs and newlines aside. */
const INVISIBLE = new RegExp(
  `[${INVISIBLE_RANGES.map(([a, b]) => `\\u{${a.toString(16)}}-\\u{${b.toString(16)}}`).join("")}]`.replace(
    "\\u{0}-\\u{9}",
    "\\u{0}-\\u{8}",
  ),
  "u",
);

/** Above this many characters the editor holds the text plain, without its JSON parse and highlighting (as
 * editors do with large files): a keystroke then re-tokenises no multi-megabyte string. */
export const PLAIN_ABOVE = 1_000_000;
const languageCompartment = new Compartment();
/** The plain editor: line numbers, the selection, undo, the keys, the search's keys; no parse, no marks. */
const PLAIN = [lineNumbers(), history(), drawSelection(), keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap])];
/** The language of a document of n characters. @param {number} n */
const languageFor = (n) =>
  n > PLAIN_ABOVE ? PLAIN : [basicSetup, json(), EditorView.lineWrapping, highlightSpecialChars({ addSpecialChars: INVISIBLE })];

/** Whether the editor holds its text plain (PLAIN_ABOVE). @param {EditorView} editor */
export const isPlain = (editor) => editor.state.doc.length > PLAIN_ABOVE;

const themeCompartment = new Compartment();
const lockCompartment = new Compartment();
/** A locked editor takes no change at all (typed, pasted or dispatched):
 * the document stands for bytes it cannot hold (a file that is not UTF-8). */
const locked = [EditorState.readOnly.of(true), EditorState.changeFilter.of(() => false)];
const darkHighlight = HighlightStyle.define([
  { tag: tags.propertyName, color: "#8ab4ff" },
  { tag: tags.string, color: "#a8e6a1" },
  { tag: tags.number, color: "#f0b34a" },
  { tag: [tags.bool, tags.null], color: "#c3a6ff" },
  { tag: tags.invalid, color: "#ff8a80" },
]);
const darkTheme = [
  EditorView.theme(
    {
      "&": { backgroundColor: "#1e2128", color: "#e6e7eb" },
      ".cm-gutters": { backgroundColor: "#1a1c22", color: "#8d93a1", borderRight: "1px solid #383c47" },
      ".cm-activeLine": { backgroundColor: "#262a33" },
      ".cm-activeLineGutter": { backgroundColor: "#262a33" },
      "&.cm-focused .cm-cursor": { borderLeftColor: "#e6e7eb" },
      "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "#36507a !important" },
      ".cm-tooltip": { backgroundColor: "#1e2128", color: "#e6e7eb" },
    },
    { dark: true },
  ),
  syntaxHighlighting(darkHighlight),
];

/**
 * The editor, holding `doc`. `onChange` gets each transaction that changes
 * the document as it is made, before the editor applies it (and re-parses
 * the JSON for its highlighting): the assembly worker starts meanwhile.
 * `onUpdate` gets each view update that changed the document, after.
 *
 * @param {HTMLElement} parent
 * @param {string} doc
 * @param {(tr: import("@codemirror/state").Transaction) => void} onChange
 * @param {(u: import("@codemirror/view").ViewUpdate) => void} onUpdate
 * @param {boolean} dark
 */
export function createEditor(parent, doc, onChange, onUpdate, dark) {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        languageCompartment.of(languageFor(doc.length)),
        lintGutter(),
        themeCompartment.of(dark ? darkTheme : []),
        lockCompartment.of([]),
        EditorView.contentAttributes.of({ "aria-label": "Request JSON", tabindex: "0" }),
        EditorState.transactionExtender.of((tr) => {
          if (!tr.docChanged) return null;
          onChange(tr);
          // The language follows the size: plain at once as the document grows past PLAIN_ABOVE (so that the
          // parse never meets it), highlighted again a task later as it shrinks (highlightIfSmall).
          if (tr.startState.doc.length > PLAIN_ABOVE || tr.newDoc.length <= PLAIN_ABOVE) return null;
          return { effects: languageCompartment.reconfigure(PLAIN) };
        }),
        EditorView.updateListener.of((u) => {
          if (!u.docChanged) return;
          onUpdate(u);
          if (u.startState.doc.length > PLAIN_ABOVE && u.state.doc.length <= PLAIN_ABOVE) setTimeout(() => highlightIfSmall(u.view));
        }),
      ],
    }),
  });
}

/**
 * Takes the highlighting back if the document is (still) small and plain. Switched in the transaction in which a
 * multi-megabyte document leaves (a file opened over it, the text deleted), the language took 80–280 ms of one
 * task (issue 43); a task later the document is the small one alone. @param {EditorView} view
 */
function highlightIfSmall(view) {
  if (view.state.doc.length <= PLAIN_ABOVE && languageCompartment.get(view.state) === PLAIN)
    view.dispatch({ effects: languageCompartment.reconfigure(languageFor(view.state.doc.length)) });
}

/** Switches the editor's colours. @param {EditorView} editor @param {boolean} dark */
export function setDark(editor, dark) {
  editor.dispatch({ effects: themeCompartment.reconfigure(dark ? darkTheme : []) });
}

/** Locks the editor (no change is taken) or unlocks it. @param {EditorView} editor @param {boolean} on */
export function setLocked(editor, on) {
  editor.dispatch({ effects: lockCompartment.reconfigure(on ? locked : []) });
}
