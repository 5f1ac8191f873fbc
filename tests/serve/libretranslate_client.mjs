// SPDX-License-Identifier: MIT
// Talks to nmtzoo-serve through two LibreTranslate clients from npm, as their users do, and prints
// what they got as one JSON object (tests/serve/libretranslate_test.cpp compares it with
// nmtzoo-translate's output):
//  - libretranslate@1.0.1 refuses a source or target missing from GET /languages, the check that
//    once refused every request; its source defaults to "auto";
//  - libretranslate-ts@0.5.12 (maintained) lists the languages, translates with alternatives and
//    detects.
// Usage: node libretranslate_client.mjs NPM_DIR URL SOURCE TARGET SENTENCES_FILE
// NPM_DIR is the folder scripts/setup.sh installs them into (npm install --prefix NPM_DIR).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [npmDir, url, source, target, sentencesFile] = process.argv.slice(2);
if (!sentencesFile) {
  console.error('usage: node libretranslate_client.mjs NPM_DIR URL SOURCE TARGET SENTENCES_FILE');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(npmDir), 'package.json'));
const { translate } = require('libretranslate');
const { libreTranslate } = require('libretranslate-ts');

const sentences = readFileSync(sentencesFile, 'utf8').split('\n').filter((line) => line !== '');
libreTranslate.setApiEndpoint(url);

const result = { languages: await libreTranslate.listLanguages(), translated: [], auto: [], sdk: [] };
for (const query of sentences) {
  result.translated.push(await translate({ query, source, target, apiurl: url }));
  result.auto.push(await translate({ query, target, apiurl: url }));
  const { status, translatedText, alternatives, error } = await libreTranslate.translate(query, source, target, 2);
  result.sdk.push({ status, translatedText, alternatives, error });
}
result.detected = await libreTranslate.detect(sentences[0]);
console.log(JSON.stringify(result));
