// Moving through the prompt: the step slider (a trajectory step by step),
// finding text in the prompt, and going to a step.

import { $, fmt, plural } from "./page.js";

/**
 * Wires the step slider, the find box and "go to step" to the view.
 * @param {import("@polyloop/preview").PromptView} view
 * @param {{letGo: () => void}} hooks `letGo`: the slider was let go of at a step (an address)
 */
export function stepControls(view, hooks) {
  const stepInput = /** @type {HTMLInputElement} */ ($("step"));
  const byStep = /** @type {HTMLInputElement} */ ($("by-step"));

  function sync() {
    const n = view.stepCount;
    const label = $("step-label");
    label.classList.toggle("stale", view.state === "stale");
    if (!byStep.checked || n === null || (view.state !== "ok" && view.state !== "stale")) {
      stepInput.disabled = true;
      label.textContent = "";
      return;
    }
    if (view.state === "stale") {
      // The steps are the last valid request's: said so, and not moved.
      stepInput.disabled = true;
      label.textContent = `${view.step} / ${n} · last valid request`;
      return;
    }
    stepInput.disabled = false;
    stepInput.max = String(n);
    if (view.step === null || view.step > n) {
      stepInput.value = String(n);
      view.step = n;
    }
    $("step-label").textContent = `${view.step} / ${n}`;
  }

  byStep.addEventListener("change", () => {
    if (byStep.checked) view.trajectory = true;
    else {
      view.step = null;
      view.trajectory = false;
    }
    sync();
  });
  stepInput.addEventListener("input", () => {
    view.step = Number(stepInput.value);
    $("step-label").textContent = `${view.step} / ${view.stepCount}`;
  });
  // A step let go of is an address (back and forward return to it).
  stepInput.addEventListener("change", () => hooks.letGo());

  /** The slider at `step` (null: the slider off, when `named`: the address names an entry). */
  function applyStep(/** @type {string | null} */ step, /** @type {boolean} */ named) {
    if (step !== null) {
      if (!byStep.checked) {
        byStep.checked = true;
        view.trajectory = true;
      }
      view.step = Number(step);
      stepInput.value = step;
      sync();
    } else if (byStep.checked && named) {
      byStep.checked = false;
      view.step = null;
      view.trajectory = false;
      sync();
    }
  }

  findControls(view);
  gotoControls(view);
  return {
    sync,
    applyStep,
    /** The step the slider shows, null when it is off. */
    get step() {
      return byStep.checked ? view.step : null;
    },
  };
}

/** Finding text in the prompt: "k of n", Enter and Shift+Enter for the next and previous hit. */
function findControls(view) {
  const find = /** @type {HTMLInputElement} */ ($("find"));
  let findTimer = 0;
  find.addEventListener("input", () => {
    clearTimeout(findTimer);
    findTimer = window.setTimeout(() => view.search(find.value), 150);
  });
  find.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    clearTimeout(findTimer);
    if (view.searchState.query !== find.value) view.search(find.value);
    else view.nextHit(e.shiftKey ? -1 : 1);
  });
  $("find-next").addEventListener("click", () => view.nextHit(1));
  $("find-prev").addEventListener("click", () => view.nextHit(-1));
  view.addEventListener("polyloop-search", () => {
    const { query, count, current } = view.searchState;
    $("find-count").textContent = !query ? "" : count ? `${fmt.format(current + 1)} of ${fmt.format(count)}` : "no match";
  });
}

/** "Go to step": scrolls the prompt to step k (1-based), or says why it cannot. */
function gotoControls(view) {
  const gotoStep = /** @type {HTMLInputElement} */ ($("goto-step"));
  /** @param {number} k */
  function goToStep(k) {
    const note = $("goto-note");
    if (view.goToStep(k)) {
      note.textContent = "";
      return;
    }
    const n = view.stepCount ?? 0;
    note.textContent =
      !Number.isInteger(k) || k < 1 || k > n
        ? `no step ${gotoStep.value || "?"}: this request has ${plural(n, "step")}`
        : `step ${k} is not shown: the step slider is at ${view.step}`;
  }
  gotoStep.addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    goToStep(Number(gotoStep.value));
  });
  gotoStep.addEventListener("change", () => goToStep(Number(gotoStep.value)));
}
