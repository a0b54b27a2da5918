// A web app's use of `@polyloop/assembly/preview`, type-checked by
// preview/test/types.test.mjs with `tsc --strict` (DOM, bundler resolution).
import { definePromptView, COLLAPSE_CHARS, type PromptView, type PromptViewError, type CompareSide } from "@polyloop/assembly/preview";
import type { Comparison } from "@polyloop/assembly";

const View: typeof PromptView = definePromptView();
const view: PromptView = document.createElement("polyloop-prompt-view");
view.request = { observation_template: "{observation}", steps: [] };
const gen: number = view.setText('{"steps": []}');
view.step = 2;
view.addEventListener("polyloop-result", (e) => console.log(e.detail.promptChars, e.detail.stepCount ?? 0, gen));
view.addEventListener("polyloop-error", (e) => {
  const err: PromptViewError = e.detail;
  console.log(err.code, err.path, err.location?.from, err.template?.offset);
});
const side: CompareSide = { kind: "current" };
void view.compare(side, { kind: "text", text: "[]" }).then((r) => {
  const answer: Comparison | null = "answer" in r ? r.answer : null;
  console.log(answer?.identical, COLLAPSE_CHARS, View.name);
});
