/**
 * `@polyloop/preview`: the `<polyloop-prompt-view>` custom element
 * (see element.js and the package README). Call {@link definePromptView} once
 * to register it.
 *
 * @module
 */

export { PromptView, definePromptView, COLLAPSE_CHARS, COLLAPSE_LINES, MAX_HITS } from "./element.js";
