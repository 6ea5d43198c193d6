/** A table shown as cards (`selector`: which tables): one "label value" line per cell, no sideways scrolling. */
const cards = (table: string) => `
  ${table} thead { display: none; }
  ${table}, ${table} tbody, ${table} tr, ${table} td { display: block; }
  ${table} tr { padding: .5rem 0; border-bottom: 1px solid var(--line); }
  ${table} tr:last-child { border-bottom: 0; }
  ${table} td { border: 0; padding: .1rem 0; text-align: left; }
  ${table} td::before { content: attr(data-label); display: inline-block; min-width: 7.5rem; color: var(--muted); font-size: .8rem; }
  ${table} td[data-label=""]::before { display: none; }`;

/**
 * The one stylesheet of the dashboard, the console and the dev mailbox, inlined under the page's CSP nonce (no
 * other request, no external asset).
 */
export const STYLESHEET = `
:root {
  --bg: #f6f7f9; --panel: #fff; --text: #1c2024; --muted: #5f6873; --line: #dfe3e8; --accent: #2454d6;
  --accent-text: #fff; --danger: #c4291c; --ok: #1d7a46; --warn: #8a5a00; --code: #eef1f5;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #121417; --panel: #1b1e22; --text: #e6e8eb; --muted: #9aa3ad; --line: #2e333a; --accent: #6d94ff;
    --accent-text: #0b0d10; --danger: #ff7a6e; --ok: #5fd08f; --warn: #f0b850; --code: #252a31;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, .mono { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { background: var(--code); padding: .05rem .3rem; border-radius: 4px; overflow-wrap: anywhere; }
header.top { background: var(--panel); border-bottom: 1px solid var(--line); }
header.top .bar { max-width: 1120px; margin: 0 auto; padding: .6rem 1rem; display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
header.top .brand { font-weight: 650; color: var(--text); }
header.top nav { display: flex; gap: 1rem; flex: 1; }
main { max-width: 1120px; margin: 0 auto; padding: 1.25rem 1rem 3rem; }
h1 { font-size: 1.5rem; margin: .2rem 0 1rem; line-height: 1.25; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 0 0 .75rem; }
h3 { font-size: 1rem; margin: 1rem 0 .5rem; }
.crumbs { color: var(--muted); font-size: .9rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 1rem 1.1rem; margin: 0 0 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); align-items: start; }
.split { display: grid; gap: 1rem; grid-template-columns: minmax(0, 2fr) minmax(280px, 1fr); align-items: start; }
@media (max-width: 900px) { .split { grid-template-columns: minmax(0, 1fr); } }
.tabs { display: flex; gap: .25rem; flex-wrap: wrap; border-bottom: 1px solid var(--line); margin: 0 0 1rem; }
.tabs a { padding: .45rem .8rem; border-radius: 8px 8px 0 0; color: var(--muted); }
.tabs a[aria-current="page"] { color: var(--text); background: var(--panel); border: 1px solid var(--line); border-bottom-color: var(--panel); margin-bottom: -1px; font-weight: 600; }
.pills { display: flex; gap: .4rem; flex-wrap: wrap; margin: 0 0 .75rem; }
.pills a { border: 1px solid var(--line); border-radius: 999px; padding: .15rem .7rem; color: var(--muted); background: var(--panel); }
.pills a[aria-current="true"] { background: var(--accent); border-color: var(--accent); color: var(--accent-text); }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td code, td .badge, .nowrap { white-space: nowrap; overflow-wrap: normal; }
.swatch { vertical-align: -1px; }
/* A request log row: method and route, and under them the key it was made with. */
.request { display: inline-grid; gap: .1rem; }
.anywhere { overflow-wrap: anywhere; }
/* A link inside running text is underlined, not told apart by colour alone (axe: link-in-text-block). */
main p a:not(.button), .notice a { text-decoration: underline; text-underline-offset: 2px; }
/* Narrower than 600 px the chart scrolls inside its panel; rtl starts it scrolled to the newest days. */
.chart-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; direction: rtl; }
.chart-wrap .usage-chart.daily { min-width: 600px; direction: ltr; }
pre.mail { white-space: pre-wrap; overflow-wrap: anywhere; }
.usage-chart.daily { display: block; max-height: 320px; }
.fields { display: grid; gap: .75rem; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); align-items: start; }
tr:last-child td { border-bottom: 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.big { font-size: 2rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.small { font-size: .85rem; }
.stack { display: grid; gap: .75rem; }
form.inline { display: inline; }
label { display: grid; gap: .25rem; font-weight: 550; }
label .hint { font-weight: 400; color: var(--muted); font-size: .85rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .75rem; margin: 0; }
fieldset label { display: inline-flex; gap: .4rem; align-items: center; margin-right: 1rem; font-weight: 400; }
legend { font-weight: 550; padding: 0 .25rem; }
input[type=text], input[type=email], input[type=number], input[type=password], input:not([type]) {
  font: inherit; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 7px; background: var(--bg); color: var(--text); width: 100%; min-width: 0;
}
input[aria-invalid="true"] { border-color: var(--danger); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
button, .button { font: inherit; font-weight: 550; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text); padding: .45rem .9rem; border-radius: 7px; cursor: pointer; display: inline-block; }
button.secondary, .button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
button.link { background: none; border: 0; color: var(--accent); padding: 0; font-weight: 400; }
.actions { display: flex; gap: .6rem; flex-wrap: wrap; align-items: center; }
.field-error { color: var(--danger); font-size: .85rem; font-weight: 400; }
.notice { border-radius: 8px; padding: .65rem .9rem; margin: 0 0 1rem; border: 1px solid; }
.notice.ok { border-color: var(--ok); color: var(--ok); }
.notice.error { border-color: var(--danger); color: var(--danger); }
.notice.warn { border-color: var(--warn); color: var(--warn); }
.secret { display: flex; gap: .5rem; align-items: center; }
.secret input { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: 999px; font-size: .8rem; font-weight: 600; border: 1px solid var(--line); white-space: nowrap; }
.badge.succeeded, .badge.active, .badge.delivered { color: var(--ok); border-color: var(--ok); }
.badge.failed, .badge.revoked, .badge.dead, .badge.expired { color: var(--danger); border-color: var(--danger); }
.badge.queued, .badge.processing, .badge.pending { color: var(--warn); border-color: var(--warn); }
.pager { display: flex; gap: 1rem; justify-content: space-between; margin-top: .75rem; }
pre { background: var(--code); padding: .6rem .8rem; border-radius: 7px; overflow-x: auto; margin: 0; }
.login { max-width: 380px; margin: 12vh auto 0; }
@media (max-width: 600px) {
  body { font-size: 16px; }
  main { padding: 1rem .75rem 2rem; }
  .panel { padding: .85rem; }
  dl.facts { grid-template-columns: 1fr; gap: 0; }
  dl.facts dd { margin-bottom: .5rem; }
  .secret { flex-direction: column; align-items: stretch; }
  /* Tables become cards: one "label value" line per cell, no sideways scrolling. */
  ${cards("table.cards")}
}
/* A table of many columns (the request log) becomes cards below a tablet's width already. */
@media (max-width: 960px) {
  ${cards("table.cards.wide")}
}
`;

/**
 * The copy buttons: `data-copy="<id of an input>"`. Uses the Clipboard API, falling back to selecting the text
 * so that Ctrl-C works where the API is unavailable.
 */
export const COPY_SCRIPT = `
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("[data-copy]");
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  field.focus(); field.select();
  var done = function (text) { button.textContent = text; setTimeout(function () { button.textContent = "Copy"; }, 2000); };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(field.value).then(function () { done("Copied"); }, function () { done("Press Ctrl-C"); });
  } else {
    done(document.execCommand && document.execCommand("copy") ? "Copied" : "Press Ctrl-C");
  }
});
`;
