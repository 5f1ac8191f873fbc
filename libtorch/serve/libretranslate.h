// SPDX-License-Identifier: MIT
// LibreTranslate's API shapes, without HTTP: the languages and settings it lists, the fields of its
// POST /translate and the answer built from the translations (libtorch/serve/http_api.cpp routes
// them).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "libtorch/search/translation_pipeline.h"
#include "torch_free/config/config.h"

namespace nmtzoo {

// The English name of an ISO 639-1 code ("de" -> "German"), or of one of LibreTranslate's
// regional codes ("pt-BR", "zh-Hans", "zh-Hant"); an unknown code is its own name.
std::string language_name(const std::string& code);

// LibreTranslate's GET /languages for models translating each (source, target) pair: every
// language read or written, ordered by code, as {code, name, targets}, `targets` being the sorted
// codes it translates to (empty for a language that is only written).
nlohmann::json libretranslate_languages(
    const std::vector<std::pair<std::string, std::string>>& pairs);

// LibreTranslate's GET /frontend/settings, which its web page and several clients read first, for
// a server whose first model translates `source` to `target`. charLimit is serve.max_line_chars:
// no line of a text that long can pass the limit. The pair proposed is the first model's, which
// always translates (LibreTranslate proposes "auto", which here needs a single source language for
// the target).
nlohmann::json libretranslate_settings(const ServeConfig& serve, const std::string& source,
                                       const std::string& target);

// The request's `alternatives`: an integer, or its decimal text, a negative count read as 0 (as
// LibreTranslate does), at most `max` (serve.max_alternatives); otherwise (3.7, "2abc", 1e300)
// a RequestError naming the field.
int64_t alternatives_field(const nlohmann::json& fields, int64_t max);

// POST /translate's answer: translatedText (a string for a string `q`, else a list), each text's
// lines joined again (`lines_of[i]` lines for text i, in order in `translations`), `alternatives`
// when asked (each text once, in n-best order, without the translation or an empty text), and
// detectedLanguage (`detected_source`) when the request's source was "auto".
nlohmann::json libretranslate_answer(const nlohmann::json& fields,
                                     const std::vector<size_t>& lines_of,
                                     const std::vector<Translation>& translations,
                                     int64_t alternatives, const std::string& detected_source);

}  // namespace nmtzoo
