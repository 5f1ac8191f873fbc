// SPDX-License-Identifier: MIT
// HTTP messages apart from connections: the request's fields and headers, form decoding,
// request targets, and bodies' content codings (zlib for gzip and deflate, brotli for br).
#include <brotli/decode.h>
#include <strings.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "libtorch/serve/http_session.h"

namespace nmtzoo {
namespace http_layer {
namespace {

// application/x-www-form-urlencoded: '+' is a space, %XX a byte.
std::string form_decode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() &&
               std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
               std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

int inflate_zlib(std::string& body, size_t max) {
  z_stream stream{};
  if (::inflateInit2(&stream, 15 + 32) != Z_OK) return 400;  // zlib or gzip framing, as it comes
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(body.data());
  stream.avail_in = static_cast<uInt>(body.size());
  int status = Z_OK;
  char chunk[kReadChunk];
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = ::inflate(&stream, Z_NO_FLUSH);
    const size_t produced = sizeof chunk - stream.avail_out;
    if (out.size() + produced > max) {
      ::inflateEnd(&stream);
      return 413;
    }
    out.append(chunk, produced);
    if (status == Z_BUF_ERROR && stream.avail_in == 0) break;  // truncated
  }
  ::inflateEnd(&stream);
  if (status != Z_STREAM_END) return 400;
  body = std::move(out);
  return 0;
}

int decode_brotli(std::string& body, size_t max) {
  BrotliDecoderState* state = ::BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  if (state == nullptr) return 400;
  std::string out;
  size_t available_in = body.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(body.data());
  BrotliDecoderResult result = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
  uint8_t chunk[kReadChunk];
  while (result == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    size_t available_out = sizeof chunk;
    uint8_t* next_out = chunk;
    result = ::BrotliDecoderDecompressStream(state, &available_in, &next_in, &available_out,
                                             &next_out, nullptr);
    const size_t produced = sizeof chunk - available_out;
    if (out.size() + produced > max) {
      ::BrotliDecoderDestroyInstance(state);
      return 413;
    }
    out.append(reinterpret_cast<const char*>(chunk), produced);
  }
  ::BrotliDecoderDestroyInstance(state);
  if (result != BROTLI_DECODER_RESULT_SUCCESS) return 400;
  body = std::move(out);
  return 0;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool split_target(std::string_view target, std::string& path, std::string& query) {
  if (target == "*") {
    path = "*";
    return true;
  }
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && iequals(target.substr(0, scheme.size()), scheme)) {
      const size_t end_of_authority = target.find_first_of("/?", scheme.size());
      if (end_of_authority == scheme.size()) return false;  // no host
      target = end_of_authority == std::string_view::npos ? std::string_view("/")
                                                          : target.substr(end_of_authority);
      if (target.front() == '?') {
        path = "/";
        query = std::string(target.substr(1));
        return true;
      }
      break;
    }
  }
  if (target.empty() || target.front() != '/') return false;
  const size_t question = target.find('?');
  path = std::string(target.substr(0, question));
  query = question == std::string_view::npos ? "" : std::string(target.substr(question + 1));
  return true;
}

}  // namespace http_layer

using http_layer::decode_brotli;
using http_layer::form_decode;
using http_layer::iequals;
using http_layer::inflate_zlib;
using http_layer::trimmed;
HangUp::Watch::~Watch() {
  std::lock_guard<std::mutex> lock(owner_->mutex_);
  owner_->on_hang_up_ = nullptr;
}

HangUp::Watch HangUp::watch(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!gone_) {
      on_hang_up_ = std::move(f);
      return Watch(this);
    }
  }
  f();
  return Watch(this);
}

void HangUp::hang_up() {
  std::function<void()> f;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (gone_) return;
    gone_ = true;
    f = std::move(on_hang_up_);
    on_hang_up_ = nullptr;
  }
  if (f) f();
}

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return "";
}

bool HttpRequest::has_header(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return iequals(h.first, name); });
}

void parse_form(std::string_view text, std::multimap<std::string, std::string>& params) {
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('&', start), text.size());
    const std::string_view pair = text.substr(start, end - start);
    const size_t equals = std::min(pair.find('='), pair.size());
    if (equals > 0)
      params.emplace(form_decode(pair.substr(0, equals)),
                     form_decode(pair.substr(std::min(equals + 1, pair.size()))));
    start = end + 1;
  }
}

int decode_content(std::string_view coding, std::string& body, size_t max) {
  coding = trimmed(coding);
  if (coding.empty() || iequals(coding, "identity")) return 0;
  if (iequals(coding, "gzip") || iequals(coding, "x-gzip") || iequals(coding, "deflate"))
    return inflate_zlib(body, max);
  if (iequals(coding, "br")) return decode_brotli(body, max);
  return 415;
}

}  // namespace nmtzoo
