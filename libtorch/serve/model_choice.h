// SPDX-License-Identifier: MIT
// Which of the server's models a request asks for: by its languages or by name. Every problem is
// a RequestError naming what the server has.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "libtorch/serve/decoding_queue.h"

namespace nmtzoo {

// The model translating `source` to `target`, and the source language: "auto" is the one source
// language translated to `target` (400 when several are).
std::pair<const ServedModel&, std::string> model_for_languages(const DecodingQueue& service,
                                                               const std::string& source,
                                                               const std::string& target);

// The model named `name` (404 naming the server's models).
const ServedModel& model_named(const DecodingQueue& service, const std::string& name);

// The models' source languages, each once, in order; with `target`, those translated into it.
std::vector<std::string> source_languages(const DecodingQueue& service,
                                          const std::string& target = "");

}  // namespace nmtzoo
