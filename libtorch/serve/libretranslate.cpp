// SPDX-License-Identifier: MIT
#include "libtorch/serve/libretranslate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "libtorch/serve/request_fields.h"

namespace nmtzoo {
namespace {

// ISO 639-1 has 184 codes and is not expected to change. The names are iso-codes' ISO 639-3
// names (Debian's iso-codes 4.15) for the codes that have a 639-1 code, without their
// parentheses, and a few in the everyday form LibreTranslate shows (Greek, Kyrgyz, Punjabi,
// Pashto, Uyghur, Haitian Creole, Limburgish). Not read from /usr/share/iso-codes at run time:
// nmtzoo does not depend on that package (it is here only because other packages pull it in),
// an installed nmtzoo should not need a Debian data path, and its names would need the same
// rewriting ("Modern Greek (1453-)", "Nepali (macrolanguage)"; ISO 639-2's are "Spanish;
// Castilian", "Greek, Modern (1453-)").
constexpr std::pair<const char*, const char*> kNames[] = {{"aa", "Afar"},
                                                          {"ab", "Abkhazian"},
                                                          {"ae", "Avestan"},
                                                          {"af", "Afrikaans"},
                                                          {"ak", "Akan"},
                                                          {"am", "Amharic"},
                                                          {"an", "Aragonese"},
                                                          {"ar", "Arabic"},
                                                          {"as", "Assamese"},
                                                          {"av", "Avaric"},
                                                          {"ay", "Aymara"},
                                                          {"az", "Azerbaijani"},
                                                          {"ba", "Bashkir"},
                                                          {"be", "Belarusian"},
                                                          {"bg", "Bulgarian"},
                                                          {"bi", "Bislama"},
                                                          {"bm", "Bambara"},
                                                          {"bn", "Bengali"},
                                                          {"bo", "Tibetan"},
                                                          {"br", "Breton"},
                                                          {"bs", "Bosnian"},
                                                          {"ca", "Catalan"},
                                                          {"ce", "Chechen"},
                                                          {"ch", "Chamorro"},
                                                          {"co", "Corsican"},
                                                          {"cr", "Cree"},
                                                          {"cs", "Czech"},
                                                          {"cu", "Church Slavic"},
                                                          {"cv", "Chuvash"},
                                                          {"cy", "Welsh"},
                                                          {"da", "Danish"},
                                                          {"de", "German"},
                                                          {"dv", "Dhivehi"},
                                                          {"dz", "Dzongkha"},
                                                          {"ee", "Ewe"},
                                                          {"el", "Greek"},
                                                          {"en", "English"},
                                                          {"eo", "Esperanto"},
                                                          {"es", "Spanish"},
                                                          {"et", "Estonian"},
                                                          {"eu", "Basque"},
                                                          {"fa", "Persian"},
                                                          {"ff", "Fulah"},
                                                          {"fi", "Finnish"},
                                                          {"fj", "Fijian"},
                                                          {"fo", "Faroese"},
                                                          {"fr", "French"},
                                                          {"fy", "Western Frisian"},
                                                          {"ga", "Irish"},
                                                          {"gd", "Scottish Gaelic"},
                                                          {"gl", "Galician"},
                                                          {"gn", "Guarani"},
                                                          {"gu", "Gujarati"},
                                                          {"gv", "Manx"},
                                                          {"ha", "Hausa"},
                                                          {"he", "Hebrew"},
                                                          {"hi", "Hindi"},
                                                          {"ho", "Hiri Motu"},
                                                          {"hr", "Croatian"},
                                                          {"ht", "Haitian Creole"},
                                                          {"hu", "Hungarian"},
                                                          {"hy", "Armenian"},
                                                          {"hz", "Herero"},
                                                          {"ia", "Interlingua"},
                                                          {"id", "Indonesian"},
                                                          {"ie", "Interlingue"},
                                                          {"ig", "Igbo"},
                                                          {"ii", "Sichuan Yi"},
                                                          {"ik", "Inupiaq"},
                                                          {"io", "Ido"},
                                                          {"is", "Icelandic"},
                                                          {"it", "Italian"},
                                                          {"iu", "Inuktitut"},
                                                          {"ja", "Japanese"},
                                                          {"jv", "Javanese"},
                                                          {"ka", "Georgian"},
                                                          {"kg", "Kongo"},
                                                          {"ki", "Kikuyu"},
                                                          {"kj", "Kuanyama"},
                                                          {"kk", "Kazakh"},
                                                          {"kl", "Kalaallisut"},
                                                          {"km", "Khmer"},
                                                          {"kn", "Kannada"},
                                                          {"ko", "Korean"},
                                                          {"kr", "Kanuri"},
                                                          {"ks", "Kashmiri"},
                                                          {"ku", "Kurdish"},
                                                          {"kv", "Komi"},
                                                          {"kw", "Cornish"},
                                                          {"ky", "Kyrgyz"},
                                                          {"la", "Latin"},
                                                          {"lb", "Luxembourgish"},
                                                          {"lg", "Ganda"},
                                                          {"li", "Limburgish"},
                                                          {"ln", "Lingala"},
                                                          {"lo", "Lao"},
                                                          {"lt", "Lithuanian"},
                                                          {"lu", "Luba-Katanga"},
                                                          {"lv", "Latvian"},
                                                          {"mg", "Malagasy"},
                                                          {"mh", "Marshallese"},
                                                          {"mi", "Maori"},
                                                          {"mk", "Macedonian"},
                                                          {"ml", "Malayalam"},
                                                          {"mn", "Mongolian"},
                                                          {"mr", "Marathi"},
                                                          {"ms", "Malay"},
                                                          {"mt", "Maltese"},
                                                          {"my", "Burmese"},
                                                          {"na", "Nauru"},
                                                          {"nb", "Norwegian Bokmål"},
                                                          {"nd", "North Ndebele"},
                                                          {"ne", "Nepali"},
                                                          {"ng", "Ndonga"},
                                                          {"nl", "Dutch"},
                                                          {"nn", "Norwegian Nynorsk"},
                                                          {"no", "Norwegian"},
                                                          {"nr", "South Ndebele"},
                                                          {"nv", "Navajo"},
                                                          {"ny", "Nyanja"},
                                                          {"oc", "Occitan"},
                                                          {"oj", "Ojibwa"},
                                                          {"om", "Oromo"},
                                                          {"or", "Oriya"},
                                                          {"os", "Ossetian"},
                                                          {"pa", "Punjabi"},
                                                          {"pi", "Pali"},
                                                          {"pl", "Polish"},
                                                          {"ps", "Pashto"},
                                                          {"pt", "Portuguese"},
                                                          {"pt-BR", "Portuguese (Brazil)"},
                                                          {"qu", "Quechua"},
                                                          {"rm", "Romansh"},
                                                          {"rn", "Rundi"},
                                                          {"ro", "Romanian"},
                                                          {"ru", "Russian"},
                                                          {"rw", "Kinyarwanda"},
                                                          {"sa", "Sanskrit"},
                                                          {"sc", "Sardinian"},
                                                          {"sd", "Sindhi"},
                                                          {"se", "Northern Sami"},
                                                          {"sg", "Sango"},
                                                          {"sh", "Serbo-Croatian"},
                                                          {"si", "Sinhala"},
                                                          {"sk", "Slovak"},
                                                          {"sl", "Slovenian"},
                                                          {"sm", "Samoan"},
                                                          {"sn", "Shona"},
                                                          {"so", "Somali"},
                                                          {"sq", "Albanian"},
                                                          {"sr", "Serbian"},
                                                          {"ss", "Swati"},
                                                          {"st", "Southern Sotho"},
                                                          {"su", "Sundanese"},
                                                          {"sv", "Swedish"},
                                                          {"sw", "Swahili"},
                                                          {"ta", "Tamil"},
                                                          {"te", "Telugu"},
                                                          {"tg", "Tajik"},
                                                          {"th", "Thai"},
                                                          {"ti", "Tigrinya"},
                                                          {"tk", "Turkmen"},
                                                          {"tl", "Tagalog"},
                                                          {"tn", "Tswana"},
                                                          {"to", "Tonga"},
                                                          {"tr", "Turkish"},
                                                          {"ts", "Tsonga"},
                                                          {"tt", "Tatar"},
                                                          {"tw", "Twi"},
                                                          {"ty", "Tahitian"},
                                                          {"ug", "Uyghur"},
                                                          {"uk", "Ukrainian"},
                                                          {"ur", "Urdu"},
                                                          {"uz", "Uzbek"},
                                                          {"ve", "Venda"},
                                                          {"vi", "Vietnamese"},
                                                          {"vo", "Volapük"},
                                                          {"wa", "Walloon"},
                                                          {"wo", "Wolof"},
                                                          {"xh", "Xhosa"},
                                                          {"yi", "Yiddish"},
                                                          {"yo", "Yoruba"},
                                                          {"za", "Zhuang"},
                                                          {"zh", "Chinese"},
                                                          {"zh-Hans", "Chinese"},
                                                          {"zh-Hant", "Chinese (traditional)"},
                                                          {"zu", "Zulu"}};

// Each text once, in n-best order, without the translation itself or an empty text.
nlohmann::json distinct_alternatives(const std::vector<std::string>& texts,
                                     const std::string& translation) {
  nlohmann::json out = nlohmann::json::array();
  std::set<std::string> seen{translation, ""};
  for (const auto& text : texts) {
    if (seen.insert(text).second) out.push_back(text);
  }
  return out;
}

}  // namespace

std::string language_name(const std::string& code) {
  const auto* end = std::end(kNames);
  const auto* it =
      std::find_if(std::begin(kNames), end, [&](const auto& entry) { return code == entry.first; });
  return it == end ? code : it->second;
}

nlohmann::json libretranslate_languages(
    const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::map<std::string, std::set<std::string>> targets;  // every language, even one only written
  for (const auto& [source, target] : pairs) {
    targets[source].insert(target);
    targets[target];
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [code, reached] : targets) {
    list.push_back({{"code", code}, {"name", language_name(code)}, {"targets", reached}});
  }
  return list;
}

nlohmann::json libretranslate_settings(const ServeConfig& serve, const std::string& source,
                                       const std::string& target) {
  const bool keys = !serve.api_keys.empty();
  return {
      {"charLimit", serve.max_line_chars},
      {"frontendTimeout", 500},  // LibreTranslate's default: ms of typing pause before translating
      {"apiKeys", keys},
      {"keyRequired", keys},
      {"suggestions", false},
      {"filesTranslation", false},
      {"supportedFilesFormat", nlohmann::json::array()},
      {"language",
       {{"source", {{"code", source}, {"name", language_name(source)}}},
        {"target", {{"code", target}, {"name", language_name(target)}}}}}};
}

int64_t alternatives_field(const nlohmann::json& fields, int64_t max) {
  if (!fields.contains("alternatives") || fields["alternatives"].is_null()) return 0;
  const nlohmann::json& value = fields["alternatives"];
  const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
  // An integer as JSON writes it or as a form field's text: an optional '-', then digits only.
  const size_t digits_from = !text.empty() && text[0] == '-' ? 1 : 0;
  const bool integer = (value.is_number_integer() || value.is_string()) &&
                       text.size() > digits_from &&
                       text.find_first_not_of("0123456789", digits_from) == std::string::npos;
  if (!integer) throw RequestError(400, "field 'alternatives' must be an integer");
  if (digits_from == 1) return 0;
  if (text.size() > 18 || std::stoll(text) > max) {
    throw RequestError(
        400, fmt::format("field 'alternatives' is {}, over this server's limit of {}", text, max));
  }
  return std::stoll(text);
}

nlohmann::json libretranslate_answer(const nlohmann::json& fields,
                                     const std::vector<size_t>& lines_of,
                                     const std::vector<Translation>& translations,
                                     int64_t alternatives, const std::string& detected_source) {
  nlohmann::json translated = nlohmann::json::array();
  nlohmann::json all_alternatives = nlohmann::json::array();
  size_t next = 0;
  for (size_t count : lines_of) {
    std::string text;
    std::vector<std::string> alternative_texts(static_cast<size_t>(alternatives));
    for (size_t i = 0; i < count; ++i, ++next) {
      const Translation& t = translations[next];
      text += (i ? "\n" : "") + (t.texts.empty() ? std::string() : t.texts[0]);
      for (size_t a = 0; a < alternative_texts.size(); ++a) {
        alternative_texts[a] +=
            (i ? "\n" : "") + (a + 1 < t.texts.size() ? t.texts[a + 1] : std::string());
      }
    }
    translated.push_back(text);
    all_alternatives.push_back(distinct_alternatives(alternative_texts, text));
  }
  const bool single = fields["q"].is_string();
  nlohmann::json body{{"translatedText", single ? translated[0] : translated}};
  if (alternatives > 0) body["alternatives"] = single ? all_alternatives[0] : all_alternatives;
  if (string_field(fields, "source", "auto") == "auto") {
    const nlohmann::json detected{{"confidence", 100.0}, {"language", detected_source}};
    body["detectedLanguage"] =
        single ? detected
               : nlohmann::json(std::vector<nlohmann::json>(translated.size(), detected));
  }
  return body;
}

}  // namespace nmtzoo
