// A web app that embeds the prompt view as its users would: import the
// package's `preview` entry, register the element, set a request, listen.
import { definePromptView } from "@polyloop/preview";

definePromptView();
const view = document.getElementById("by-property");
const events = [];
for (const el of document.querySelectorAll("polyloop-prompt-view")) {
  el.addEventListener("polyloop-result", (e) => events.push({ id: el.id, type: "result", detail: e.detail }));
  el.addEventListener("polyloop-error", (e) =>
    events.push({ id: el.id, type: "error", detail: { code: e.detail.code, path: e.detail.path, message: e.detail.message } }),
  );
}
view.request = {
  run_messages: [{ role: "system", content: [{ type: "text", text: "You are helpful." }] }],
  steps: Array.from({ length: 50 }, (_, i) => ({ raw_output: `step ${i}`, observation: `<img src=x onerror="window.__xss=1"> ${i}` })),
  observation_template: "Observation: {observation}",
  max_prompt_chars: 1000,
};
window.app = { view, events };
