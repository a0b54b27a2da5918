/** The prompt view's stylesheet (480 px high unless the page sizes it) (adopted by its shadow root; CSP-safe: no
 * inline style attributes, no <style> element). Colours are custom
 * properties, light and dark; `theme="light|dark"` on the element overrides
 * prefers-color-scheme. */
export const CSS = String.raw`
:host {
  --pv-bg: #f7f7f5; --pv-panel: #ffffff; --pv-ink: #1d1f23; --pv-muted: #5c6170; --pv-line: #d5d7dd;
  --pv-run: #2a62c4; --pv-run-bg: #eef3fd; --pv-injection: #955c00; --pv-injection-bg: #fdf6e7;
  --pv-goal: #12703d; --pv-goal-bg: #ecf7f0; --pv-history: #6c42b8; --pv-history-bg: #f4effc;
  --pv-bad: #b3261e; --pv-bad-bg: #fdecec; --pv-new: #0b6e8a; --pv-new-bg: #e2f5fa; --pv-mark: #fff1a8;
  --pv-mono: ui-monospace, "DejaVu Sans Mono", "Cascadia Mono", Menlo, Consolas, monospace;
  --pv-sans: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  display: flex; flex-direction: column; min-height: 0; min-width: 0; position: relative; height: 480px;
  background: var(--pv-bg); color: var(--pv-ink); font: 14px/1.45 var(--pv-sans); color-scheme: light;
}
@media (prefers-color-scheme: dark) {
  :host(:not([theme="light"])) {
    --pv-bg: #16181d; --pv-panel: #1e2128; --pv-ink: #e6e7eb; --pv-muted: #a3a8b5; --pv-line: #383c47;
    --pv-run: #8ab4ff; --pv-run-bg: #1b2536; --pv-injection: #f0b34a; --pv-injection-bg: #2d2413;
    --pv-goal: #6fd49b; --pv-goal-bg: #15291e; --pv-history: #c3a6ff; --pv-history-bg: #251d36;
    --pv-bad: #ff8a80; --pv-bad-bg: #3a1c1c; --pv-new: #7fd8ef; --pv-new-bg: #123039; --pv-mark: #5c4d00;
    color-scheme: dark;
  }
}
:host([theme="dark"]) {
  --pv-bg: #16181d; --pv-panel: #1e2128; --pv-ink: #e6e7eb; --pv-muted: #a3a8b5; --pv-line: #383c47;
  --pv-run: #8ab4ff; --pv-run-bg: #1b2536; --pv-injection: #f0b34a; --pv-injection-bg: #2d2413;
  --pv-goal: #6fd49b; --pv-goal-bg: #15291e; --pv-history: #c3a6ff; --pv-history-bg: #251d36;
  --pv-bad: #ff8a80; --pv-bad-bg: #3a1c1c; --pv-new: #7fd8ef; --pv-new-bg: #123039; --pv-mark: #5c4d00;
  color-scheme: dark;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
button { font: inherit; font-size: 12px; padding: 1px 8px; border: 1px solid var(--pv-line); border-radius: 5px; background: var(--pv-panel); color: var(--pv-ink); cursor: pointer; }
button:hover { border-color: var(--pv-run); }
button:focus-visible, .list:focus-visible, .row:focus-visible { outline: 2px solid var(--pv-run); outline-offset: 1px; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; padding: 6px 12px; background: var(--pv-panel); border-bottom: 1px solid var(--pv-line); }
.state { font-size: 12px; font-weight: 600; padding: 0 8px; border-radius: 10px; border: 1px solid var(--pv-line); }
.state[data-state="ok"] { color: var(--pv-goal); border-color: var(--pv-goal); }
.state[data-state="stale"], .state[data-state="error"] { color: var(--pv-bad); border-color: var(--pv-bad); background: var(--pv-bad-bg); }
.totals { font-variant-numeric: tabular-nums; font-weight: 600; }
.gauge { position: relative; flex: 0 1 auto; min-width: min(220px, 100%); min-height: 20px; border: 1px solid var(--pv-line); border-radius: 10px; background: var(--pv-bg); overflow: hidden; }
.gauge .fill { position: absolute; inset: 0 auto 0 0; width: 0; background: var(--pv-goal); opacity: .35; }
.gauge .label { position: relative; display: block; padding: 0 10px; text-align: center; font-size: 12px; line-height: 18px; font-variant-numeric: tabular-nums; }
.gauge.warn .fill { background: var(--pv-injection); }
.gauge.over { border-color: var(--pv-bad); background: var(--pv-bad-bg); }
.gauge.over .fill { background: var(--pv-bad); opacity: .3; }
.gauge.over .label { color: var(--pv-ink); font-weight: 700; }
.gauge.none .label { color: var(--pv-muted); }
.gauge.stale { border-style: dashed; border-color: var(--pv-bad); }
.gauge.stale .fill { background: var(--pv-muted); }
.totals.stale { color: var(--pv-bad); }
.digests.stale table { border-left: 3px dashed var(--pv-bad); padding-left: 4px; }
.digests .stale-note { font-weight: 400; color: var(--pv-bad); }
.legend { margin-left: auto; display: flex; gap: 6px; flex-wrap: wrap; }
.legend span { font-size: 11px; padding: 0 6px; border-radius: 4px; border-left: 4px solid; }
.stale-banner { padding: 6px 12px; background: var(--pv-bad-bg); color: var(--pv-bad); border-bottom: 1px solid var(--pv-bad); font-weight: 600; font-size: 13px; }
.error { margin: 8px 12px 0; padding: 8px 12px; border: 1px solid var(--pv-bad); border-radius: 6px; background: var(--pv-bad-bg); overflow-wrap: anywhere; }
.error .code { font-weight: 700; color: var(--pv-bad); font-family: var(--pv-mono); }
.error .path { font-family: var(--pv-mono); }
.error .message { margin-top: 4px; }
.error .template { margin-top: 8px; font: 13px/1.6 var(--pv-mono); white-space: pre; overflow-x: auto; background: var(--pv-panel); border: 1px solid var(--pv-line); border-radius: 4px; padding: 4px 8px; }
.error .template mark { background: var(--pv-bad); color: #fff; border-radius: 2px; padding: 0 1px; }
.error .template mark.end { background: none; color: var(--pv-bad); }
.error .column { margin-top: 4px; font-size: 12.5px; color: var(--pv-muted); }
.error .locate { margin-top: 6px; }
.cache { padding: 4px 12px; font-size: 12px; color: var(--pv-muted); border-bottom: 1px solid var(--pv-line); background: var(--pv-panel); }
.cache:empty { display: none; }
.cache b { color: var(--pv-ink); font-weight: 600; }
.cache .same { color: var(--pv-goal); }
.cache .changed { color: var(--pv-bad); }
.frame { display: flex; flex-direction: column; flex: 1 1 auto; height: 100%; min-height: 0; min-width: 0; }
.list { flex: 1 1 var(--pv-list-height, 0px); min-height: 120px; overflow: auto; position: relative; contain: strict; }
:host(.stale-view) .list { background: repeating-linear-gradient(135deg, transparent 0 10px, var(--pv-bad-bg) 10px 20px); }
:host(.stale-view) .list .rows { filter: grayscale(1); }
.rows { position: relative; width: 100%; }
.row { position: absolute; left: 0; right: 0; top: 0; padding: 3px 12px; }
.head { display: flex; align-items: center; gap: 8px; padding-top: 8px; font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: var(--pv-muted); }
.head::after { content: ""; flex: 1; border-top: 1px dashed var(--pv-line); }
.head button { font-size: 11px; text-transform: none; letter-spacing: 0; }
.msg { border: 1px solid var(--pv-line); border-left: 5px solid; border-radius: 6px; background: var(--pv-panel); min-width: 0; }
.msg .meta { display: flex; flex-wrap: wrap; gap: 2px 8px; align-items: baseline; padding: 3px 10px; font-size: 12px; color: var(--pv-muted); border-bottom: 1px solid var(--pv-line); }
.msg .role { font-weight: 700; color: var(--pv-ink); }
.msg .where { font-family: var(--pv-mono); font-size: 11.5px; overflow-wrap: anywhere; }
.msg .chars { margin-left: auto; font-variant-numeric: tabular-nums; }
.badge { font-size: 11px; font-weight: 700; padding: 0 6px; border-radius: 4px; }
.badge.new { color: var(--pv-new); background: var(--pv-new-bg); border: 1px solid var(--pv-new); }
.badge.over { color: var(--pv-bad); background: var(--pv-bad-bg); border: 1px solid var(--pv-bad); }
.badge.changed { color: var(--pv-injection); background: var(--pv-injection-bg); border: 1px solid var(--pv-injection); }
.msg.is-new { box-shadow: 0 0 0 2px var(--pv-new); }
.msg.is-over { box-shadow: 0 0 0 2px var(--pv-bad); }
.block { margin: 0; padding: 6px 10px; font: 12.5px/1.5 var(--pv-mono); white-space: pre-wrap; overflow-wrap: anywhere; }
.block + .block { border-top: 1px dashed var(--pv-line); }
.block.empty { color: var(--pv-muted); font-style: italic; }
.block.empty::before { content: "(empty text)"; }
.block .nl::before { content: "\21B5"; color: var(--pv-muted); opacity: .6; }
.block .cp { unicode-bidi: isolate; font-size: 0; }
.block .cp::before { content: attr(data-cp); display: inline-block; margin: 0 1px; padding: 0 3px; border: 1px solid var(--pv-bad); border-radius: 3px; font: 600 10px/1.3 var(--pv-sans); color: var(--pv-bad); background: var(--pv-bad-bg); vertical-align: 1px; }
.block .cp.tag::before { white-space: pre-wrap; font-family: var(--pv-mono); }
.badge.hidden { color: var(--pv-bad); background: var(--pv-bad-bg); border: 1px solid var(--pv-bad); }
.block mark.hit { background: var(--pv-mark); color: inherit; border-radius: 2px; }
.block mark.hit.current { outline: 2px solid var(--pv-run); }
.more { margin: 0 10px 6px; }
.bps { padding: 4px 12px; font-size: 12px; color: var(--pv-muted); border-bottom: 1px solid var(--pv-line); background: var(--pv-panel); overflow-wrap: anywhere; }
.bps:empty { display: none; }
.bps b { color: var(--pv-ink); font-weight: 600; }
.bps .code { font-family: var(--pv-mono); color: var(--pv-bad); }
.bp { display: flex; align-items: center; gap: 6px; margin: 0 10px; padding: 1px 0 3px; font: 600 11px/1.4 var(--pv-sans); color: var(--pv-run); border-top: 2px dashed var(--pv-run); }
.bp::before { content: "\25B2"; font-size: 9px; }
.badge.since { color: var(--pv-new); background: var(--pv-new-bg); border: 1px dashed var(--pv-new); }
.msg.is-since { box-shadow: 0 0 0 2px var(--pv-new); }
.block mark.since { background: var(--pv-new-bg); color: inherit; outline: 1px dashed var(--pv-new); border-radius: 2px; }
.msg.seg-run { border-left-color: var(--pv-run); background: var(--pv-run-bg); }
.msg.seg-injection { border-left-color: var(--pv-injection); background: var(--pv-injection-bg); }
.msg.seg-goal { border-left-color: var(--pv-goal); background: var(--pv-goal-bg); }
.msg.seg-history { border-left-color: var(--pv-history); background: var(--pv-history-bg); }
.legend .seg-run { border-color: var(--pv-run); background: var(--pv-run-bg); }
.legend .seg-injection { border-color: var(--pv-injection); background: var(--pv-injection-bg); }
.legend .seg-goal { border-color: var(--pv-goal); background: var(--pv-goal-bg); }
.legend .seg-history { border-color: var(--pv-history); background: var(--pv-history-bg); }
.digests { padding: 4px 12px 8px; border-top: 1px solid var(--pv-line); background: var(--pv-panel); font-size: 12px; }
.digests summary { cursor: pointer; font-weight: 600; }
.digests table { border-collapse: collapse; }
.digests td { padding: 1px 8px 1px 0; vertical-align: top; }
.digests td.d { font-family: var(--pv-mono); font-size: 11.5px; color: var(--pv-muted); word-break: break-all; }
.empty-note { padding: 16px; color: var(--pv-muted); }
`;
