// SPDX-License-Identifier: MIT
#include "libtorch/serve/web_page.h"

namespace nmtzoo {
namespace {

// Plain HTML, CSS and JavaScript, no external resources: the page works offline and behind
// proxies. Below 700 px the two panes stack.
constexpr const char* kStyle = R"css(
* { box-sizing: border-box; }
[hidden] { display: none !important; }
:root { --accent: #1d5fa8; --line: #d0d7de; --muted: #5f6b76; --bad: #b00020; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #f3f5f8; }
header { background: var(--accent); color: #fff; }
header h1 { max-width: 72rem; margin: 0 auto; padding: .7rem 1rem; font-size: 1.2rem; font-weight: 600; }
main, footer { max-width: 72rem; margin: 1rem auto; padding: 0 1rem; }
select, input, button, textarea { font: inherit; color: inherit; }
select, input, button { padding: .35rem .6rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
button { cursor: pointer; }
button:disabled { opacity: .45; cursor: default; }
.languages { display: grid; grid-template-columns: 1fr auto 1fr; gap: 1rem; align-items: center; margin-bottom: .6rem; }
.languages select { min-width: 0; width: 100%; font-weight: 600; }
.panes { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.pane { min-width: 0; display: flex; flex-direction: column; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
#source { flex: 1; width: 100%; min-height: 13rem; padding: .8rem; border: 0; border-radius: 8px 8px 0 0; font-size: 1.15rem; resize: vertical; }
#translation { flex: 1; min-height: 13rem; padding: .8rem; font-size: 1.15rem; overflow-wrap: anywhere; }
#translation:empty::before { content: "Translation"; color: var(--muted); }
.foot { display: flex; align-items: center; justify-content: space-between; gap: .5rem; min-height: 2.6rem;
        padding: .3rem .8rem; border-top: 1px solid var(--line); color: var(--muted); font-size: .85rem; }
.over { color: var(--bad); font-weight: 600; }
.sentence + .sentence { margin-top: .7rem; }
.sentence .text { margin: 0; white-space: pre-wrap; }
.tools { display: flex; gap: .4rem; margin-top: .15rem; }
.tools button { padding: 0 .55rem; font-size: .75rem; color: var(--muted); border-radius: 1rem; }
.tools button[aria-expanded="true"] { color: #fff; background: var(--accent); border-color: var(--accent); }
.nbest { margin: .4rem 0; padding-left: 1.6rem; font-size: .95rem; }
.score { color: var(--muted); font-size: .8rem; }
.heatmap { max-width: 100%; overflow-x: auto; margin: .4rem 0; }
.heatmap svg { display: block; }
.note { color: #8a5300; font-size: .8rem; }
#error { color: var(--bad); min-height: 1.5rem; margin: .5rem 0; }
details label { display: inline-block; margin: .3rem 1rem .3rem 0; }
details input { width: 5rem; }
footer { color: var(--muted); font-size: .8rem; }
@media (max-width: 700px) {
  .panes { grid-template-columns: 1fr; }
  main, footer { padding: 0 .5rem; }
  .languages { gap: .4rem; }
  #source, #translation { min-height: 9rem; }
}
)css";

constexpr const char* kBody = R"html(
<header><h1>nmtzoo translate</h1></header>
<main>
<div class="languages">
  <select id="source-lang" aria-label="Source language"></select>
  <button id="swap" type="button" title="Swap languages" aria-label="Swap languages" disabled>&#8644;</button>
  <select id="target-lang" aria-label="Target language"></select>
</div>
<div class="panes">
  <section class="pane" id="source-pane">
    <textarea id="source" placeholder="Type or paste text, one sentence a line" aria-label="Text to translate"></textarea>
    <div class="foot"><span id="count">0</span><span>Ctrl+Enter translates now</span></div>
  </section>
  <section class="pane" id="target-pane">
    <div id="translation" aria-live="polite"></div>
    <div class="foot"><span id="status"></span><button id="copy" type="button" disabled>Copy</button></div>
  </section>
</div>
<div id="error" role="alert"></div>
<details id="options">
  <summary id="options-summary">Options</summary>
  <label id="model-row" hidden>Model <select id="model"></select></label>
  <label>Beam <input id="beam" type="number" min="1" max="64" value="5"></label>
  <label>n-best <input id="nbest" type="number" min="1" max="16" value="3"></label>
  <label id="key-row" hidden>API key <input id="api-key" type="password" autocomplete="off"></label>
</details>
</main>
<footer>API: <code>POST /translate</code> (LibreTranslate's), <code>POST /v1/translate</code>,
<code>GET /languages</code>, <code>GET /v1/models</code>, <code>GET /metrics</code></footer>
)html";

// Translates through POST /v1/translate (n-best list and attention), debounced as the text
// changes, at once on Ctrl+Enter. body[data-state] and body[data-requests] are for the tests.
constexpr const char* kScript = R"js(
const $ = (id) => document.getElementById(id);
let languages = [], models = [], charLimit = 0, delay = 500;
let timer = 0, controller = null, lastKey = '', requests = 0, translated = '';
const open = new Set();  // the toggles left open ("sentence:panel"), kept across translations

const setState = (state, status) => { document.body.dataset.state = state; $('status').textContent = status; };
const entry = (code) => languages.find((l) => l.code === code) || {code, name: code, targets: []};
const targetsOf = (code) => entry(code).targets || [];
const named = (codes) => codes.map((code) => [code, entry(code).name || code]);

async function getJson(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// Fills a menu with [value, label] pairs, keeping `wanted`, else its value, when still offered.
function setOptions(select, entries, wanted) {
  const offered = (value) => entries.some(([v]) => v === value);
  const keep = offered(wanted) ? wanted : select.value;
  select.replaceChildren(...entries.map(([value, label]) => new Option(label, value)));
  if (offered(keep)) select.value = keep;
}

function pairChanged(wantedTarget) {
  const source = $('source-lang').value;
  setOptions($('target-lang'), named(targetsOf(source)), wantedTarget);
  const target = $('target-lang').value;
  $('swap').disabled = !targetsOf(target).includes(source);
  const pair = models.filter((m) => m.source === source && m.target === target);
  setOptions($('model'), pair.map((m) => [m.name, `${m.name} (${m.arch})`]));
  $('model-row').hidden = pair.length < 2;
  describeOptions();
}

function searchOptions() {
  const beam = Math.max(1, Math.round(Number($('beam').value)) || 1);
  return {beam, nbest: Math.min(Math.max(1, Math.round(Number($('nbest').value)) || 1), beam)};
}

function describeOptions() {
  const {beam, nbest} = searchOptions();
  const model = $('model-row').hidden ? '' : `, model ${$('model').value}`;
  $('options-summary').textContent = `Options: beam ${beam}, ${nbest}-best${model}`;
}

function updateCount() {
  const length = [...$('source').value].length;
  $('count').textContent = charLimit > 0 ? `${length} / ${charLimit}` : `${length} characters`;
  $('count').classList.toggle('over', charLimit > 0 && length > charLimit);
  return length;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A button under sentence i that shows or hides its panel.
function toggle(i, kind, label, panel) {
  const button = element('button', `toggle ${kind}-toggle`, label);
  button.type = 'button';
  const show = (visible) => {
    panel.hidden = !visible;
    button.setAttribute('aria-expanded', String(visible));
    visible ? open.add(`${i}:${kind}`) : open.delete(`${i}:${kind}`);
  };
  show(open.has(`${i}:${kind}`));
  button.addEventListener('click', () => show(panel.hidden));
  return button;
}

function sentenceView(t, i) {
  const view = element('div', 'sentence');
  view.append(element('p', 'text', t.text));
  const notes = [...(t.warnings || [])];
  if (t.truncated) notes.push('the source was cut to the model\'s length');
  if (notes.length) view.append(element('div', 'note', notes.join('; ')));
  const hypotheses = t.nbest || [];
  const tools = element('div', 'tools'), panels = [];
  if (hypotheses.length > 1) {
    const list = element('ol', 'nbest');
    for (const h of hypotheses) {
      const item = element('li', '', h.text + ' ');
      if (typeof h.score === 'number') item.append(element('span', 'score', `score ${h.score.toFixed(3)}`));
      list.append(item);
    }
    tools.append(toggle(i, 'nbest', `${hypotheses.length}-best`, list));
    panels.push(list);
  }
  if (hypotheses.length && hypotheses[0].attention_svg) {
    const figure = element('div', 'heatmap');
    figure.innerHTML = hypotheses[0].attention_svg;  // the server's own SVG, labels escaped
    tools.append(toggle(i, 'heatmap', 'attention', figure));
    panels.push(figure);
  }
  if (panels.length) view.append(tools, ...panels);
  return view;
}

function show(translations) {
  translated = translations.map((t) => t.text).join('\n');
  $('translation').replaceChildren(...translations.map(sentenceView));
  $('copy').disabled = translations.length === 0;
}

// Sends the text unless the same request was the last one sent (force: send it anyway).
async function translate(force) {
  clearTimeout(timer);
  const text = $('source').value;
  const length = updateCount();
  const stop = () => { if (controller) controller.abort(); controller = null; lastKey = ''; };
  if (!text.trim()) {
    stop();
    show([]);
    $('error').textContent = '';
    return setState('ready', '');
  }
  if (charLimit > 0 && length > charLimit) {
    stop();
    $('error').textContent = `The text has ${length} characters; this server translates at most ${charLimit}.`;
    return setState('error', '');
  }
  const body = {text, ...searchOptions(), return_attention: true};
  if ($('api-key').value) body.api_key = $('api-key').value;
  if ($('model').value) body.model = $('model').value;
  else Object.assign(body, {source: $('source-lang').value, target: $('target-lang').value});
  const key = JSON.stringify(body);
  if (!force && key === lastKey) return;
  stop();
  lastKey = key;
  const mine = controller = new AbortController();
  document.body.dataset.requests = ++requests;
  setState('translating', 'Translating…');
  const start = performance.now();
  try {
    const response = await fetch('/v1/translate', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                   body: key, signal: mine.signal});
    const result = await response.json();
    if (mine.signal.aborted) return;
    if (!response.ok) throw new Error(result.error || response.statusText);
    show(result.translations);
    $('error').textContent = '';
    setState('done', `${((performance.now() - start) / 1000).toFixed(2)} s`);
  } catch (e) {
    if (mine.signal.aborted) return;  // a newer request replaced this one
    lastKey = '';
    $('error').textContent = e.message;
    setState('error', '');
  } finally {
    if (controller === mine) controller = null;
  }
}

$('source').addEventListener('input', () => {
  updateCount();
  clearTimeout(timer);
  timer = setTimeout(() => translate(false), delay);
});
$('source').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    translate(true);
  }
});
$('source-lang').addEventListener('change', () => { pairChanged(); translate(false); });
$('target-lang').addEventListener('change', () => { pairChanged($('target-lang').value); translate(false); });
for (const id of ['model', 'beam', 'nbest']) {
  $(id).addEventListener('change', () => { describeOptions(); translate(false); });
}
$('swap').addEventListener('click', () => {
  const source = $('source-lang').value, target = $('target-lang').value;
  if (!targetsOf(target).includes(source)) return;
  $('source-lang').value = target;
  pairChanged(source);
  if (translated) $('source').value = translated;
  translate(false);
});
$('copy').addEventListener('click', async () => {
  let copied = false;
  try {
    await navigator.clipboard.writeText(translated);  // absent outside secure contexts (plain http to another host)
    copied = true;
  } catch (e) {
    const scratch = element('textarea');
    scratch.value = translated;
    document.body.append(scratch);
    scratch.select();
    copied = document.execCommand('copy');
    scratch.remove();
  }
  $('copy').textContent = copied ? 'Copied' : 'Copy failed';
  setTimeout(() => { $('copy').textContent = 'Copy'; }, 1500);
});

// LibreTranslate's {code, name, targets} list; the models' pairs when it cannot be read.
function languagesOfModels() {
  const list = [];
  for (const m of models) {
    const source = list.find((l) => l.code === m.source) || (list.push({code: m.source, name: m.source, targets: []}), list[list.length - 1]);
    if (!source.targets.includes(m.target)) source.targets.push(m.target);
  }
  return list;
}

(async () => {
  setState('loading', 'Loading…');
  // A keyed server's page needs its key (kept in this browser): typed once, sent with every request.
  const storedKey = localStorage.getItem('nmtzoo-api-key') || '';
  $('api-key').value = storedKey;
  const modelsPath = storedKey ? `/v1/models?api_key=${encodeURIComponent(storedKey)}` : '/v1/models';
  const [listed, served, settings] = await Promise.all([
    getJson('/languages').catch(() => null), getJson(modelsPath).catch(() => []),
    getJson('/frontend/settings').catch(() => ({}))]);
  if (settings.keyRequired) {
    $('key-row').hidden = false;
    if (!storedKey) $('options').open = true;
    $('api-key').addEventListener('input', () => {
      localStorage.setItem('nmtzoo-api-key', $('api-key').value);
      translate(false);
    });
  }
  models = Array.isArray(served) ? served : [];
  languages = Array.isArray(listed) && listed.length ? listed : languagesOfModels();
  if (settings.charLimit > 0) charLimit = settings.charLimit;
  if (settings.frontendTimeout > 0) delay = settings.frontendTimeout;
  const defaults = settings.language || {};
  const sources = languages.filter((l) => (l.targets || []).length).map((l) => l.code);
  setOptions($('source-lang'), named(sources), (defaults.source || {}).code);
  pairChanged((defaults.target || {}).code);
  setState('ready', '');
  if ($('source').value.trim()) translate(false);  // text the browser kept across a reload
  else updateCount();
})();
)js";

}  // namespace

const std::string& web_page_html() {
  static const std::string page =
      std::string(
          "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>nmtzoo translate</title>\n<style>") +
      kStyle + "</style>\n</head>\n<body>" + kBody + "<script>" + kScript +
      "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace nmtzoo
