// A web app's use of `@polyloop/preview`, type-checked by
// preview/test/types.test.mjs with `tsc --strict` (DOM, bundler resolution).
import { definePromptView, COLLAPSE_CHARS, type PromptView, type PromptViewError, type CompareSide } from "@polyloop/preview";
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
// The request is the binding's AssembleRequest, not any object.
// @ts-expect-error steps is a list of steps
view.request = { observation_template: "{observation}", steps: 3 };
view.setText("{}", { lineBreak: "\r\n" });
const hits: number = view.search("süd");
view.nextHit(-1);
view.addEventListener("polyloop-search", (e) => console.log(e.detail.count, e.detail.current, view.searchState.message, hits));
const moved: boolean = view.goToStep(3);
console.log(moved, view.stepCount ?? 0);
