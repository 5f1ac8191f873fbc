// SPDX-License-Identifier: MIT
// nmtzoo._core.Translator: the library's Translator (libtorch/search/translator.h) for Python,
// wrapped by python/nmtzoo/translator.py. Decoding options arrive as keywords named after the
// schema's decoding keys (or the long flags of their aliases, torch_free/config/aliases.cpp) and go
// to Translator::search_options as overrides, so the schema parses and checks them as it does the
// apps' flags and the errors are the apps' messages. Results are translation_json's objects, what
// nmtzoo-translate --format jsonl and the server write. Translating and scoring release the GIL
// (calls on one Translator run at once) and block SIGINT and SIGTERM on the calling thread
// while they run: no signal handler may interrupt oneDNN's sgemm
// (libtorch/kernels/onednn_matmul.h).
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <pthread.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "libtorch/kernels/onednn_matmul.h"
#include "libtorch/runtime/checkpoint.h"
#include "libtorch/runtime/runtime.h"
#include "libtorch/search/translation_json.h"
#include "libtorch/search/translator.h"
#include "python/src/bindings.h"
#include "torch_free/archs/registry.h"
#include "torch_free/common/cpu_cores.h"
#include "torch_free/config/aliases.h"
#include "torch_free/config/loader.h"
#include "torch_free/config/schema.h"
#include "torch_free/io/text_file.h"
#include "torch_free/metrics/corpus_metric.h"
#include "torch_free/tokenizer/sentencepiece.h"

namespace py = pybind11;

namespace nmtzoo {
namespace {

PyObject* config_error_type = nullptr;  // nmtzoo.ConfigError, a ValueError; never freed

// SIGINT and SIGTERM wait on this thread while the scope runs, except at between_steps(); the
// thread's previous mask comes back at its end.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  }
  ~StopSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

  // Between two decoding steps (GIL released): a SIGINT or SIGTERM pending is let through here,
  // where no sgemm runs on this thread (Python's handler notes it; an unhandled SIGTERM ends the
  // process, as it would have), then Python's handlers run and what they raise (KeyboardInterrupt)
  // stops the call as py::error_already_set. A thread that does not block the signals (one of
  // LibTorch's) may have taken it instead, which only PyErr_CheckSignals sees: that needs the GIL,
  // cheap alone but a wait beside a thread running Python code, so it is asked every 50 ms at most.
  void between_steps() {
    sigset_t pending;
    sigpending(&pending);
    const bool arrived = sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1;
    if (arrived) {
      pthread_sigmask(SIG_SETMASK, &previous_, nullptr);  // delivered now, on this thread
      pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    }
    const auto now = std::chrono::steady_clock::now();
    if (!arrived && now - last_check_ < std::chrono::milliseconds(50)) return;
    last_check_ = now;
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }

 private:
  sigset_t signals_;
  sigset_t previous_;
  std::chrono::steady_clock::time_point last_check_ = std::chrono::steady_clock::now();
};

std::string yaml_quoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      quoted += fmt::format("\\x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

// A keyword's value as the YAML text the schema parses: true/false, numbers in Python's shortest
// round-trip spelling (integers: also numpy's), strings double-quoted (so "null" stays a string).
std::string yaml_text(const py::handle& value, const std::string& name) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) return object == Py_True ? "true" : "false";
  if (PyIndex_Check(object)) {
    auto integer = py::reinterpret_steal<py::object>(PyNumber_Index(object));
    if (!integer) throw py::error_already_set();
    return py::str(integer);
  }
  if (PyFloat_Check(object) || PyObject_HasAttrString(object, "__float__")) {
    auto number = py::reinterpret_steal<py::object>(PyNumber_Float(object));
    if (!number) throw py::error_already_set();
    const double x = PyFloat_AsDouble(number.ptr());
    if (std::isnan(x)) return ".nan";
    if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
    return py::repr(number);
  }
  if (PyUnicode_Check(object)) return yaml_quoted(value.cast<std::string>());
  throw py::type_error(fmt::format("{}: expected a bool, an int, a float or a str, not {}", name,
                                   Py_TYPE(object)->tp_name));
}

// The schema key a keyword names: decoding.<name>, else the decoding key whose alias's long flag
// is --<name> with '-' as '_'. Anything else is a TypeError, as Python's own unexpected keyword.
std::string decoding_key(const std::string& name, const std::string& method) {
  const std::string key = "decoding." + name;
  if (find_option(key) != nullptr) return key;
  for (const KeyAlias& alias : decoding_aliases()) {
    std::string flag = alias_name(alias);
    flag.erase(0, flag.find_first_not_of('-'));
    std::replace(flag.begin(), flag.end(), '-', '_');
    if (flag == name) return alias.key;
  }
  std::string message = fmt::format("{}() got an unexpected keyword argument '{}'", method, name);
  const std::string closest = suggest_key(key);
  if (closest.rfind("decoding.", 0) == 0)
    message += fmt::format(" (did you mean '{}'?)", closest.substr(9));
  throw py::type_error(
      message + "; the decoding options are the decoding.* keys of nmtzoo-config --reference");
}

// Keywords as overrides, in the order given; None leaves the checkpoint's value. Each is `where`
// in the schema's messages under its own name: "beam: decoding.beam must be ...".
std::vector<KeyValue> key_values(const py::dict& options, const std::string& method) {
  std::vector<KeyValue> values;
  for (const auto& item : options) {
    const std::string name = py::str(item.first);
    if (item.second.is_none()) continue;
    const std::string key = decoding_key(name, method);
    // A number or a switch given as text (beam='5') is the caller's mistake, as in Python itself.
    const std::string& type = find_option(key)->type;
    const bool numeric = type.rfind("int", 0) == 0 || type.rfind("float", 0) == 0 || type == "bool";
    if (numeric && PyUnicode_Check(item.second.ptr())) {
      throw py::type_error(fmt::format("{}: expected {} ({}), not str", name,
                                       type.rfind("bool", 0) == 0 ? "a bool" : "a number", type));
    }
    values.push_back({key, yaml_text(item.second, name), name});
  }
  return values;
}

void check_texts(const std::vector<std::string>& texts, const std::string& what) {
  for (size_t i = 0; i < texts.size(); ++i) {
    if (auto bad = find_text_problem(texts[i])) {
      throw py::value_error(fmt::format("{}[{}]: {}", what, i, bad->describe()));
    }
  }
}

py::object to_python(const nlohmann::json& value) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::boolean:
      return py::bool_(value.get<bool>());
    case Type::number_integer:
      return py::int_(value.get<int64_t>());
    case Type::number_unsigned:
      return py::int_(value.get<uint64_t>());
    case Type::number_float:
      return py::float_(value.get<double>());
    case Type::string:
      return py::str(value.get_ref<const std::string&>());
    case Type::array: {
      py::list list;
      for (const auto& element : value) list.append(to_python(element));
      return std::move(list);
    }
    case Type::object: {
      py::dict dict;
      for (const auto& [key, element] : value.items()) dict[py::str(key)] = to_python(element);
      return std::move(dict);
    }
    default:
      return py::none();
  }
}

class PyTranslator {
 public:
  PyTranslator(const std::vector<std::string>& checkpoints, const std::optional<std::string>& dtype,
               std::optional<int64_t> threads, const std::string& device,
               const std::vector<double>& weights, const std::string& ensemble_mode) {
    if (threads) {
      if (const std::string problem = thread_count_problem(*threads); !problem.empty()) {
        throw py::value_error("threads " + problem);
      }
    }
    if (ensemble_mode != "prob" && ensemble_mode != "logprob") {
      throw py::value_error("ensemble_mode must be prob or logprob, but got '" + ensemble_mode +
                            "'");
    }
    DeviceChoice choice;
    try {
      choice = parse_device_choice(device);
    } catch (const std::runtime_error& e) {
      throw py::value_error(e.what());
    }
    if (dtype) defaults_.push_back({"decoding.dtype", yaml_quoted(*dtype), "dtype"});
    c10::Device resolved = c10::kCPU;
    try {
      resolved = resolve_device(choice, "device");
    } catch (const std::runtime_error& e) {  // cuda asked of a LibTorch that sees no GPU
      throw py::value_error(e.what());
    }
    py::gil_scoped_release release;
    // As the apps' configure_threads, without their process-wide malloc policy.
    if (threads) {
      at::set_num_threads(static_cast<int>(*threads > 0 ? *threads : available_cores()));
    }
    install_onednn_matmul();
    const TranslatorOptions options =
        TranslatorOptions().device(resolved).weights(weights).ensemble_mode(
            ensemble_mode == "logprob" ? EnsembleMode::kLogProb : EnsembleMode::kProb);
    translator_ = std::make_unique<Translator>(checkpoints, options);
    translator_->prepare(translator_->search_options(defaults_));  // a dtype this device cannot run
  }

  // One dict per source: translation_json's object with every hypothesis ("nbest"), the source
  // pieces, and with return_attention each hypothesis's attention rows (target tokens and EOS x
  // source pieces and EOS).
  py::list translate_batch(const std::vector<std::string>& sources,
                           const std::optional<std::vector<std::string>>& target_prefix,
                           bool return_alignment, bool return_attention, int64_t alignment_layer,
                           int64_t alignment_heads, const py::dict& options) {
    const std::vector<KeyValue> values = with_defaults(key_values(options, "translate_batch"));
    check_texts(sources, "sources");
    std::vector<TranslationRequest> requests;
    for (const std::string& source : sources) requests.push_back({source, {}, {}, {}});
    if (target_prefix) {
      if (target_prefix->size() != sources.size()) {
        throw py::value_error(fmt::format("target_prefix has {} entries for {} sources",
                                          target_prefix->size(), sources.size()));
      }
      check_texts(*target_prefix, "target_prefix");
      for (size_t i = 0; i < sources.size(); ++i) requests[i].prefix = (*target_prefix)[i];
    }
    std::vector<Translation> translations;
    std::vector<nlohmann::json> objects;
    std::vector<std::vector<std::vector<std::vector<float>>>> attention(sources.size());
    {
      py::gil_scoped_release release;
      StopSignalsBlocked blocked;
      SearchOptions search = translator_->search_options(values);
      search.record_attention = return_alignment || return_attention;
      if (search.record_attention)
        search.attention = AttentionChoice{alignment_layer, -1, alignment_heads, true};
      try {
        translations = translator_->translate_batch(requests, search, 1, {},
                                                    [&blocked] { blocked.between_steps(); });
      } catch (const UnusableGuide& e) {
        // The library names 1-based input lines, as the apps print them; here the caller's list
        // and its 0-based index, as check_texts does.
        const char* argument = e.field == "prefix" ? "target_prefix" : "sources";
        throw py::value_error(fmt::format("{}[{}]: {}", argument, e.line - 1, e.problem));
      }
      const TranslationJsonOptions json_options{
          true, true, return_alignment ? AlignmentOutput::kHard : AlignmentOutput::kNone, false};
      for (size_t i = 0; i < translations.size(); ++i) {
        objects.push_back(
            translation_json(translations[i], *translator_->tokenizers().tgt, json_options));
        if (!return_attention) continue;
        for (size_t k = 0; k < translations[i].texts.size(); ++k) {
          attention[i].push_back(attention_rows(translations[i], k));
        }
      }
    }
    py::list results;
    for (size_t i = 0; i < translations.size(); ++i) {
      auto result = to_python(objects[i]).cast<py::dict>();
      result["source_tokens"] = py::cast(translations[i].source_pieces);
      if (return_attention) {
        auto nbest = result["nbest"].cast<py::list>();
        for (size_t k = 0; k < attention[i].size() && k < nbest.size(); ++k) {
          nbest[k]["attention"] = py::cast(attention[i][k]);
        }
      }
      results.append(std::move(result));
    }
    return results;
  }

  py::list score_batch(const std::vector<std::string>& sources,
                       const std::vector<std::string>& targets, const py::dict& options) {
    const std::vector<KeyValue> values = with_defaults(key_values(options, "score_batch"));
    check_texts(sources, "sources");
    check_texts(targets, "targets");
    std::vector<ScoredPair> scored;
    {
      py::gil_scoped_release release;
      StopSignalsBlocked blocked;
      scored = translator_->score_batch(sources, targets, translator_->search_options(values),
                                        [&blocked] { blocked.between_steps(); });
    }
    py::list results;
    for (const ScoredPair& pair : scored) {
      py::dict result;
      result["log_prob"] = pair.log_prob;
      result["token_log_probs"] = py::cast(pair.token_log_probs);
      result["tokens"] = py::cast(pair.tokens);
      result["truncated"] = pair.truncated;
      results.append(std::move(result));
    }
    return results;
  }

  // Every decoding key's value (YAML text) that a call with these keywords would decode with.
  py::dict decoding_options(const py::dict& options) const {
    RunConfig config = translator_->config();
    config.decoding =
        translator_->search_options(with_defaults(key_values(options, "decoding_options")));
    py::dict result;
    for (const OptionSpec* option : section_options("decoding")) {
      result[py::str(option->key.substr(option->key.find('.') + 1))] = option->format(config);
    }
    return result;
  }

  const Translator& translator() const { return *translator_; }

 private:
  std::vector<KeyValue> with_defaults(std::vector<KeyValue> values) const {
    values.insert(values.begin(), defaults_.begin(), defaults_.end());
    return values;
  }

  std::vector<KeyValue> defaults_;  // the constructor's dtype, under every call's keywords
  std::unique_ptr<Translator> translator_;
};

}  // namespace
}  // namespace nmtzoo

void bind_translator(py::module_& m) {
  using nmtzoo::PyTranslator;
  nmtzoo::register_builtin_models();
  nmtzoo::config_error_type = PyErr_NewException("nmtzoo.ConfigError", PyExc_ValueError, nullptr);
  m.add_object("ConfigError", py::handle(nmtzoo::config_error_type));
  // Every exception of this module's calls, whatever translators other modules (torch) register:
  // the schema's errors and other bad arguments are ValueErrors, failing files OSErrors, the rest
  // (a checkpoint that cannot be loaded, LibTorch's errors) RuntimeErrors; what() is the message
  // the apps print after "error: ".
  py::register_local_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (py::error_already_set& e) {
      e.restore();
    } catch (const py::builtin_exception& e) {
      e.set_error();
    } catch (const nmtzoo::MetricError&) {
      throw;  // to nmtzoo._core.metrics.MetricError, a ValueError (python/src/metrics_bindings.cpp)
    } catch (const nmtzoo::ConfigError& e) {
      PyErr_SetString(nmtzoo::config_error_type, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const nmtzoo::CheckpointError& e) {  // as Python's own open() would, or ValueError
      PyErr_SetString(e.kind == nmtzoo::CheckpointError::Kind::kMissing ? PyExc_FileNotFoundError
                      : e.kind == nmtzoo::CheckpointError::Kind::kDirectory
                          ? PyExc_IsADirectoryError
                          : PyExc_ValueError,
                      e.what());
    } catch (const nmtzoo::IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_NoMemory();
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  py::class_<PyTranslator>(m, "Translator")
      .def(py::init<const std::vector<std::string>&, const std::optional<std::string>&,
                    std::optional<int64_t>, const std::string&, const std::vector<double>&,
                    const std::string&>(),
           py::arg("checkpoints"), py::arg("dtype") = py::none(), py::arg("threads") = py::none(),
           py::arg("device") = "cpu", py::arg("weights") = std::vector<double>{},
           py::arg("ensemble_mode") = "prob")
      .def("translate_batch", &PyTranslator::translate_batch, py::arg("sources"),
           py::arg("target_prefix") = py::none(), py::arg("return_alignment") = false,
           py::arg("return_attention") = false,
           py::arg("alignment_layer") = nmtzoo::AttentionChoice::kPenultimateLayer,
           py::arg("alignment_heads") = 0, py::arg("options") = py::dict())
      .def("score_batch", &PyTranslator::score_batch, py::arg("sources"), py::arg("targets"),
           py::arg("options") = py::dict())
      .def("decoding_options", &PyTranslator::decoding_options, py::arg("options") = py::dict())
      .def_property_readonly("checkpoints",
                             [](const PyTranslator& t) { return t.translator().paths(); })
      .def_property_readonly(
          "arch", [](const PyTranslator& t) { return t.translator().config().model.arch; })
      .def_property_readonly(
          "device", [](const PyTranslator& t) { return t.translator().options().device().str(); })
      .def_property_readonly("max_source_tokens", [](const PyTranslator& t) {
        return t.translator().max_source_tokens();
      });
}
