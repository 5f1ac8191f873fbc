#include "core/serve/web_page.h"

namespace nmtzoo {

const std::string& web_page_html() {
  // Plain HTML and JavaScript, no external resources: the page works offline and behind proxies.
  static const std::string page = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>nmtzoo</title>
<style>
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
textarea { width: 100%; height: 8rem; font-size: 1rem; }
#translation { white-space: pre-wrap; font-size: 1.1rem; border: 1px solid #ccc; padding: .5rem; min-height: 2rem; }
#error { color: #b00; }
.sentence { margin-top: 1.5rem; }
.nbest li { margin: .2rem 0; }
.score { color: #666; font-size: .85rem; }
</style>
</head>
<body>
<h1>nmtzoo</h1>
<p><label for="model">Model</label> <select id="model"></select>
<label for="beam">beam</label> <input id="beam" type="number" min="1" max="64" value="5" style="width:4rem">
<label for="nbest">n-best</label> <input id="nbest" type="number" min="1" max="16" value="3" style="width:4rem"></p>
<textarea id="source" placeholder="Type or paste text, one sentence a line"></textarea>
<p><button id="translate">Translate</button> <span id="status"></span></p>
<div id="error"></div>
<h2>Translation</h2>
<div id="translation"></div>
<div id="details"></div>
<script>
const $ = (id) => document.getElementById(id);
fetch('/v1/models').then((r) => r.json()).then((models) => {
  for (const m of models) {
    const option = document.createElement('option');
    option.value = m.name;
    option.textContent = `${m.name} (${m.source} → ${m.target})`;
    $('model').appendChild(option);
  }
});
$('translate').addEventListener('click', async () => {
  $('error').textContent = '';
  $('status').textContent = 'translating…';
  const beam = Number($('beam').value), nbest = Math.min(Number($('nbest').value), beam);
  const body = {model: $('model').value, text: $('source').value, beam, nbest, return_attention: true};
  try {
    const response = await fetch('/v1/translate', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                   body: JSON.stringify(body)});
    const result = await response.json();
    if (!response.ok) throw new Error(result.error || response.statusText);
    $('translation').textContent = result.translations.map((t) => t.text).join('\n');
    const details = $('details');
    details.innerHTML = '';
    result.translations.forEach((t, i) => {
      const section = document.createElement('div');
      section.className = 'sentence';
      const title = document.createElement('h3');
      title.textContent = `Sentence ${i + 1}`;
      section.appendChild(title);
      const list = document.createElement('ol');
      list.className = 'nbest';
      for (const h of t.nbest) {
        const item = document.createElement('li');
        item.textContent = h.text + ' ';
        const score = document.createElement('span');
        score.className = 'score';
        score.textContent = `score ${h.score.toFixed(3)}`;
        item.appendChild(score);
        list.appendChild(item);
      }
      section.appendChild(list);
      if (t.nbest.length && t.nbest[0].attention_svg) {
        const figure = document.createElement('div');
        figure.className = 'heatmap';
        figure.innerHTML = t.nbest[0].attention_svg;
        section.appendChild(figure);
      }
      details.appendChild(section);
    });
    $('status').textContent = 'done';
  } catch (e) {
    $('error').textContent = e.message;
    $('status').textContent = '';
  }
});
</script>
</body>
</html>
)html";
  return page;
}

}  // namespace nmtzoo
