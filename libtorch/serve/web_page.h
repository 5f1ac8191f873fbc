// SPDX-License-Identifier: MIT
// The page nmtzoo-serve shows at "/": LibreTranslate's layout (source and target panes, language
// menus from GET /languages with a swap button, translation as you type or on Ctrl+Enter, copy
// button, character count against /frontend/settings' charLimit), with each sentence's n-best
// list and attention heatmap behind toggles, all through POST /v1/translate.
#pragma once

#include <string>

namespace nmtzoo {

const std::string& web_page_html();

}  // namespace nmtzoo
