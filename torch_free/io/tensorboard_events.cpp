// SPDX-License-Identifier: MIT
#include "torch_free/io/tensorboard_events.h"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/crc.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace fs = std::filesystem;
namespace {

// TensorBoard reads any file whose name holds "tfevents"; the suffix tells nmtzoo's own apart.
constexpr char kPrefix[] = "events.out.tfevents.";
constexpr char kSuffix[] = ".nmtzoo";
constexpr char kFileVersion[] = "brain.Event:2";

// CRC-32C (Castagnoli), masked as TFRecord masks it (a CRC of data holding CRCs is weak).
uint32_t masked_crc32c(const std::string& bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  const uint32_t value = crc.checksum();
  return ((value >> 15) | (value << 17)) + 0xa282ead8u;
}

// Little-endian whatever the host.
void put_fixed(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}
uint64_t get_fixed(const std::string& in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}

// The protocol buffer wire format (varints, fixed 32/64-bit values, length-delimited fields).
enum Wire { kVarint = 0, kFixed64 = 1, kDelimited = 2, kFixed32 = 5 };
void put_varint(std::string& out, uint64_t value) {
  for (; value >= 0x80; value >>= 7) out += static_cast<char>((value & 0x7f) | 0x80);
  out += static_cast<char>(value);
}
void put_key(std::string& out, int field, Wire wire) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire);
}
void put_delimited(std::string& out, int field, const std::string& bytes) {
  put_key(out, field, kDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}
template <class To, class From>
To bits(From value) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

// Event {double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5;}
// Summary {repeated Value value = 1;}  Value {string tag = 1; float simple_value = 2;}
std::string event(int64_t step, const std::string& file_version, const Scalars& scalars) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string out;
  put_key(out, 1, kFixed64);
  put_fixed(out, bits<uint64_t>(now), 8);
  if (step != 0) {  // proto3 leaves a default value out
    put_key(out, 2, kVarint);
    put_varint(out, static_cast<uint64_t>(step));
  }
  if (!file_version.empty()) put_delimited(out, 3, file_version);
  if (!scalars.empty()) {
    std::string summary;
    for (const auto& [tag, value] : scalars) {
      std::string entry;
      put_delimited(entry, 1, tag);
      put_key(entry, 2, kFixed32);
      put_fixed(entry, bits<uint32_t>(static_cast<float>(value)), 4);
      put_delimited(summary, 1, entry);
    }
    put_delimited(out, 5, summary);
  }
  return out;
}

std::string framed(const std::string& record) {
  std::string length;
  put_fixed(length, record.size(), 8);
  std::string out = length;
  put_fixed(out, masked_crc32c(length), 4);
  out += record;
  put_fixed(out, masked_crc32c(record), 4);
  return out;
}

// Reads one protocol buffer message field by field; a malformed one throws std::out_of_range.
class FieldReader {
 public:
  explicit FieldReader(std::string bytes) : bytes_(std::move(bytes)) {}
  bool next(int& field, int& wire) {
    if (at_ == bytes_.size()) return false;
    const uint64_t key = varint();
    field = static_cast<int>(key >> 3);
    wire = static_cast<int>(key & 7);
    return true;
  }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const auto byte = static_cast<unsigned char>(take(1)[0]);
      value |= uint64_t{byte & 0x7fu} << shift;
      if (byte < 0x80) return value;
    }
    throw std::out_of_range("a varint longer than 10 bytes");
  }
  uint64_t fixed(int bytes) { return get_fixed(take(static_cast<size_t>(bytes)), 0, bytes); }
  std::string delimited() { return take(varint()); }
  void skip(int wire) {
    switch (wire) {
      case kVarint:
        varint();
        break;
      case kFixed64:
        take(8);
        break;
      case kDelimited:
        delimited();
        break;
      case kFixed32:
        take(4);
        break;
      default:
        throw std::out_of_range(fmt::format("wire type {}", wire));
    }
  }

 private:
  std::string take(uint64_t count) {
    if (count > bytes_.size() - at_) throw std::out_of_range("a field past the record's end");
    std::string out = bytes_.substr(at_, count);
    at_ += count;
    return out;
  }
  std::string bytes_;
  size_t at_ = 0;
};

TensorBoardEvent parse_event(const std::string& record) {
  TensorBoardEvent parsed;
  FieldReader event(record);
  for (int field, wire; event.next(field, wire);) {
    if (field == 1 && wire == kFixed64) {
      parsed.wall_time = bits<double>(event.fixed(8));
    } else if (field == 2 && wire == kVarint) {
      parsed.step = static_cast<int64_t>(event.varint());
    } else if (field == 3 && wire == kDelimited) {
      parsed.file_version = event.delimited();
    } else if (field == 5 && wire == kDelimited) {
      FieldReader summary(event.delimited());
      for (int value_field, value_wire; summary.next(value_field, value_wire);) {
        if (value_field != 1 || value_wire != kDelimited) {
          summary.skip(value_wire);
          continue;
        }
        FieldReader value(summary.delimited());
        std::string tag;
        double number = 0;
        for (int f, w; value.next(f, w);) {
          if (f == 1 && w == kDelimited)
            tag = value.delimited();
          else if (f == 2 && w == kFixed32)
            number = bits<float>(static_cast<uint32_t>(value.fixed(4)));
          else
            value.skip(w);
        }
        parsed.scalars.emplace_back(tag, number);
      }
    } else {
      event.skip(wire);
    }
  }
  return parsed;
}

}  // namespace

std::vector<TensorBoardEvent> read_tensorboard_events(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot read the TensorBoard event file '" + path + "'");
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<TensorBoardEvent> events;
  uint64_t at = 0;
  while (bytes.size() - at >= 12) {
    const std::string length_bytes = bytes.substr(at, 8);
    if (get_fixed(bytes, at + 8, 4) != masked_crc32c(length_bytes)) break;
    const uint64_t length = get_fixed(length_bytes, 0, 8);
    if (length > bytes.size() - at - 16) break;
    const std::string record = bytes.substr(at + 12, length);
    if (get_fixed(bytes, at + 12 + length, 4) != masked_crc32c(record)) break;
    try {
      events.push_back(parse_event(record));
    } catch (const std::out_of_range& e) {
      throw IoError(fmt::format("{}: the record at byte {} is not a TensorBoard event ({})", path,
                                at, e.what()));
    }
    at += 16 + length;
    events.back().end = at;
  }
  return events;
}

TensorBoardEvents::TensorBoardEvents(std::string dir) : dir_(std::move(dir)) {}

void TensorBoardEvents::open() {
  if (!path_.empty()) return;
  std::vector<std::string> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) == 0 && name.size() > std::strlen(kSuffix) &&
        name.compare(name.size() - std::strlen(kSuffix), std::string::npos, kSuffix) == 0) {
      found.push_back(entry.path().string());
    }
  }
  if (!found.empty()) {
    path_ = *std::max_element(found.begin(), found.end());
    return;
  }
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  path_ = fmt::format("{}/{}{}.{}{}", dir_, kPrefix, seconds, host, kSuffix);
  append(event(0, kFileVersion, {}));
}

void TensorBoardEvents::start_at(int64_t step) {
  open();
  uint64_t keep = 0;
  for (const auto& parsed : read_tensorboard_events(path_)) {
    if (parsed.step > step) break;
    keep = parsed.end;
  }
  if (keep < fs::file_size(path_)) fs::resize_file(path_, keep);
  if (keep == 0) append(event(0, kFileVersion, {}));  // a file cut short in its first record
}

void TensorBoardEvents::write(int64_t step, const Scalars& scalars) {
  open();
  append(event(step, "", scalars));
}

void TensorBoardEvents::append(const std::string& record) {
  std::ofstream out(path_, std::ios::binary | std::ios::app);
  out << framed(record);
  out.flush();
  if (!out) throw IoError("cannot append to the TensorBoard event file '" + path_ + "'");
}

}  // namespace nmtzoo
