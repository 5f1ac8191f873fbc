// SPDX-License-Identifier: MIT
#include "torch_free/tokenizer/sentencepiece.h"

#include <dlfcn.h>
#include <link.h>

#include <array>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <utility>

#include "torch_free/tokenizer/special_tokens.h"
#include "torch_free/tokenizer/spm_shim.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
constexpr const char* kShimName = "libnmtzoo_spm.so";

// The shim's entry points, resolved once in a private link namespace.
struct ShimApi {
  std::string path;
  decltype(&nmtzoo_spm_load) load;
  decltype(&nmtzoo_spm_free) free;
  decltype(&nmtzoo_spm_vocab_size) vocab_size;
  decltype(&nmtzoo_spm_special_id) special_id;
  decltype(&nmtzoo_spm_encode_ids) encode_ids;
  decltype(&nmtzoo_spm_sample_encode_ids) sample_encode_ids;
  decltype(&nmtzoo_spm_encode_pieces) encode_pieces;
  decltype(&nmtzoo_spm_decode_ids) decode_ids;
  decltype(&nmtzoo_spm_id_to_piece) id_to_piece;
  decltype(&nmtzoo_spm_train) train;
};

std::vector<fs::path> shim_candidates() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("NMTZOO_SPM_SHIM")) candidates.emplace_back(env);
  std::error_code ec;
  fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) {
    candidates.push_back(exe_dir / kShimName);
    candidates.push_back(exe_dir / ".." / "lib" / "nmtzoo" / kShimName);
  }
  // Where the install puts it, relative to this library (<libdir>/libnmtzoo_base.so.V and
  // <libdir>/nmtzoo/libnmtzoo_spm.so): found from any program linking an installed nmtzoo,
  // whatever the prefix and the libdir, and before the build folder's copy below.
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&shim_candidates), &self) != 0 && self.dli_fname != nullptr &&
      fs::path(self.dli_fname).is_absolute()) {
    candidates.push_back(fs::path(self.dli_fname).parent_path() / "nmtzoo" / kShimName);
  }
#ifdef NMTZOO_SPM_SHIM_BUILD_PATH
  candidates.emplace_back(NMTZOO_SPM_SHIM_BUILD_PATH);
#endif
#ifdef NMTZOO_SPM_SHIM_INSTALL_PATH
  candidates.emplace_back(NMTZOO_SPM_SHIM_INSTALL_PATH);
#endif
  return candidates;
}

template <class F>
void resolve(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  if (function == nullptr) throw TokenizerError(std::string("SentencePiece shim lacks ") + name);
}

ShimApi load_shim() {
  std::ostringstream tried;
  for (const auto& candidate : shim_candidates()) {
    std::error_code ec;
    if (!fs::exists(candidate, ec)) {
      tried << "\n  " << candidate.string() << ": not found";
      continue;
    }
    void* library = dlmopen(LM_ID_NEWLM, candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      tried << "\n  " << candidate.string() << ": " << dlerror();
      continue;
    }
    ShimApi api;
    api.path = fs::weakly_canonical(candidate).string();
    resolve(library, "nmtzoo_spm_load", api.load);
    resolve(library, "nmtzoo_spm_free", api.free);
    resolve(library, "nmtzoo_spm_vocab_size", api.vocab_size);
    resolve(library, "nmtzoo_spm_special_id", api.special_id);
    resolve(library, "nmtzoo_spm_encode_ids", api.encode_ids);
    resolve(library, "nmtzoo_spm_sample_encode_ids", api.sample_encode_ids);
    resolve(library, "nmtzoo_spm_encode_pieces", api.encode_pieces);
    resolve(library, "nmtzoo_spm_decode_ids", api.decode_ids);
    resolve(library, "nmtzoo_spm_id_to_piece", api.id_to_piece);
    resolve(library, "nmtzoo_spm_train", api.train);
    return api;
  }
  throw TokenizerError("cannot load the SentencePiece shim " + std::string(kShimName) +
                       " (set NMTZOO_SPM_SHIM to its path); tried:" + tried.str());
}

const ShimApi& shim() {
  static const ShimApi api = load_shim();
  return api;
}

struct ErrorBuffer {
  std::array<char, 1024> text{};
  char* data() { return text.data(); }
  size_t size() const { return text.size(); }
};

// The callbacks run inside the shim's frames, which no exception may unwind through (spm_shim.h):
// the shim has its own C++ runtime, so the unwinder finds no record of those frames and the
// process aborts. Each callback keeps what it throws here, and the caller rethrows it once the
// shim has returned.
class CallbackError {
 public:
  // Runs `f`, keeping what it throws; false when it threw, now or in an earlier call.
  template <class F>
  bool run(F&& f) noexcept {
    if (error_) return false;
    try {
      f();
      return true;
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

// The context of a sink: where its items go, and what adding them threw (e.g. std::bad_alloc).
template <class Target>
struct Sink {
  Target& target;
  CallbackError error;
};

void append_text(void* context, const char* data, size_t size) noexcept {
  auto& sink = *static_cast<Sink<std::string>*>(context);
  sink.error.run([&] { sink.target.append(data, size); });
}

void push_piece(void* context, const char* data, size_t size) noexcept {
  auto& sink = *static_cast<Sink<std::vector<std::string>>*>(context);
  sink.error.run([&] { sink.target.emplace_back(data, size); });
}

void assign_ids(void* context, const int* ids, size_t count) noexcept {
  auto& sink = *static_cast<Sink<std::vector<int32_t>>*>(context);
  sink.error.run([&] { sink.target.assign(ids, ids + count); });
}

// The training sentences, and what supplying them threw: a DataError naming the file and line of
// bad data, an IoError of a truncated file... Training then stops (the shim fails, writing no
// model) and train_sentencepiece rethrows it as it was thrown.
struct Sentences {
  const SentenceSource& source;
  CallbackError error;
};

int next_sentence(void* context, const char** data, size_t* size) noexcept {
  auto& sentences = *static_cast<Sentences*>(context);
  std::string_view sentence;
  bool more = false;
  if (!sentences.error.run([&] { more = sentences.source(sentence); })) return -1;
  if (!more) return 0;
  *data = sentence.data();
  *size = sentence.size();
  return 1;
}

const char* model_type_name(SubwordModel type) {
  return type == SubwordModel::kBpe ? "bpe" : "unigram";
}

}  // namespace

std::string sentencepiece_shim_path() { return shim().path; }

void train_sentencepiece(const SentencePieceTrainOptions& options, const SentenceSource& source) {
  std::ostringstream args;
  args << "--model_prefix=" << options.model_prefix
       << " --model_type=" << model_type_name(options.model_type)
       << " --vocab_size=" << options.vocab_size
       << " --character_coverage=" << options.character_coverage << " --pad_id=" << kPadId
       << " --unk_id=" << kUnkId << " --bos_id=" << kBosId << " --eos_id=" << kEosId
       << " --num_threads=2 --hard_vocab_limit=false";
  for (size_t i = 0; i < options.user_symbols.size(); ++i) {
    const std::string& symbol = options.user_symbols[i];
    if (symbol.find_first_of(" ,") != std::string::npos) {
      throw TokenizerError("a user symbol must not contain spaces or commas: '" + symbol + "'");
    }
    args << (i == 0 ? " --user_defined_symbols=" : ",") << symbol;
  }
  if (options.input_sentence_size > 0) {
    args << " --input_sentence_size=" << options.input_sentence_size
         << " --shuffle_input_sentence=true";
  }
  if (options.model_prefix.find(' ') != std::string::npos) {
    throw TokenizerError("tokenizer model prefix must not contain spaces: '" +
                         options.model_prefix + "'");
  }
  fs::path parent = fs::path(options.model_prefix).parent_path();
  if (!parent.empty()) fs::create_directories(parent);
  ErrorBuffer error;
  const auto& api = shim();
  Sentences sentences{source, {}};
  const int status = api.train(args.str().c_str(), next_sentence, &sentences, options.seed,
                               options.quiet ? 1 : 0, error.data(), error.size());
  sentences.error.rethrow();  // the cause, not the shim's "the sentence source failed"
  if (status != 0) {
    throw TokenizerError("training SentencePiece model '" + options.model_prefix +
                         "' failed: " + error.data());
  }
}

SentencePiece::SentencePiece(NmtzooSpm* handle, std::string path, std::string serialized)
    : handle_(handle),
      path_(std::move(path)),
      serialized_(std::move(serialized)),
      vocab_size_(shim().vocab_size(handle)) {}

SentencePiece::SentencePiece(SentencePiece&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      path_(std::move(other.path_)),
      serialized_(std::move(other.serialized_)),
      vocab_size_(other.vocab_size_) {}

SentencePiece& SentencePiece::operator=(SentencePiece&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) shim().free(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
    serialized_ = std::move(other.serialized_);
    vocab_size_ = other.vocab_size_;
  }
  return *this;
}

SentencePiece::~SentencePiece() {
  if (handle_ != nullptr) shim().free(handle_);
}

SentencePiece SentencePiece::load(const std::string& model_path) {
  std::error_code ec;
  if (fs::is_directory(model_path, ec)) {
    throw TokenizerError("tokenizer model '" + model_path + "' is a directory");
  }
  if (!fs::is_regular_file(model_path, ec)) {
    throw TokenizerError("tokenizer model '" + model_path + "' does not exist");
  }
  std::ifstream in(model_path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw TokenizerError("cannot read tokenizer model '" + model_path + "'");
  return from_serialized(std::move(bytes), model_path);
}

SentencePiece SentencePiece::from_serialized(std::string serialized, std::string name) {
  const std::string& model_path = name;
  ErrorBuffer error;
  NmtzooSpm* handle = shim().load(serialized.data(), serialized.size(), error.data(), error.size());
  if (handle == nullptr) {
    throw TokenizerError("cannot load tokenizer model '" + model_path +
                         "' (corrupt or not a SentencePiece model): " + error.data());
  }
  SentencePiece model(handle, name, std::move(serialized));
  const std::array<std::pair<const char*, int64_t>, 4> expected{
      {{"pad", kPadId}, {"unk", kUnkId}, {"bos", kBosId}, {"eos", kEosId}}};
  for (int which = 0; which < 4; ++which) {
    int64_t id = shim().special_id(handle, which);
    if (id != expected[which].second) {
      throw TokenizerError("tokenizer model '" + model_path + "' has " + expected[which].first +
                           "_id " + std::to_string(id) + " but nmtzoo requires " +
                           std::to_string(expected[which].second) +
                           "; train it with nmtzoo or with --pad_id=0 --unk_id=1 --bos_id=2 "
                           "--eos_id=3");
    }
  }
  return model;
}

std::vector<int32_t> SentencePiece::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  Sink<std::vector<int32_t>> sink{ids, {}};
  ErrorBuffer error;
  const int status = shim().encode_ids(handle_, text.data(), text.size(), assign_ids, &sink,
                                       error.data(), error.size());
  sink.error.rethrow();
  if (status != 0) throw TokenizerError("encoding with '" + path_ + "' failed: " + error.data());
  return ids;
}

std::vector<int32_t> SentencePiece::sample_encode(std::string_view text, double alpha,
                                                  uint64_t seed) const {
  std::vector<int32_t> ids;
  Sink<std::vector<int32_t>> sink{ids, {}};
  ErrorBuffer error;
  const int status =
      shim().sample_encode_ids(handle_, text.data(), text.size(), static_cast<float>(alpha), seed,
                               assign_ids, &sink, error.data(), error.size());
  sink.error.rethrow();
  if (status != 0) {
    throw TokenizerError("sampling a segmentation with '" + path_ + "' failed: " + error.data());
  }
  return ids;
}

std::vector<std::string> SentencePiece::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  Sink<std::vector<std::string>> sink{pieces, {}};
  ErrorBuffer error;
  const int status = shim().encode_pieces(handle_, text.data(), text.size(), push_piece, &sink,
                                          error.data(), error.size());
  sink.error.rethrow();
  if (status != 0) throw TokenizerError("encoding with '" + path_ + "' failed: " + error.data());
  return pieces;
}

std::string SentencePiece::decode(const std::vector<int32_t>& ids) const {
  std::vector<int> checked;
  checked.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size_) {
      throw TokenizerError("cannot decode id " + std::to_string(id) + " with '" + path_ +
                           "' (vocabulary size " + std::to_string(vocab_size_) + ")");
    }
    checked.push_back(id);
  }
  std::string text;
  Sink<std::string> sink{text, {}};
  ErrorBuffer error;
  const int status = shim().decode_ids(handle_, checked.data(), checked.size(), append_text, &sink,
                                       error.data(), error.size());
  sink.error.rethrow();
  if (status != 0) throw TokenizerError("decoding with '" + path_ + "' failed: " + error.data());
  return text;
}

std::string SentencePiece::piece(int64_t id) const {
  std::string text;
  Sink<std::string> sink{text, {}};
  const int status = shim().id_to_piece(handle_, static_cast<int>(id), append_text, &sink);
  sink.error.rethrow();
  if (status != 0) {
    throw TokenizerError("id " + std::to_string(id) + " is outside the vocabulary of '" + path_ +
                         "'");
  }
  return text;
}

int64_t SentencePiece::piece_id(std::string_view wanted) const {
  for (int64_t id = 0; id < vocab_size_; ++id) {
    if (piece(id) == wanted) return id;
  }
  return -1;
}

}  // namespace nmtzoo
