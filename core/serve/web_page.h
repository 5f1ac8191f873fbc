// The page nmtzoo-serve shows at "/": a text box, the translation, the n-best list and each
// sentence's attention heatmap, all through POST /v1/translate.
#pragma once

#include <string>

namespace nmtzoo {

const std::string& web_page_html();

}  // namespace nmtzoo
