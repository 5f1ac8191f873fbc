// SPDX-License-Identifier: MIT
// TensorBoard event files of scalars: what fairseq, OpenNMT-py, JoeyNMT and Sockeye users watch
// training in, and what tools that sync runs read.
//
// A file is TFRecord framing (uint64 length, masked CRC-32C of it, the record, its masked
// CRC-32C, little-endian) around `tensorboard.Event` protocol buffers: the first holds
// file_version "brain.Event:2", each later one a Summary of simple_value scalars at one step.
//
// Why the few protobuf fields are encoded here instead of by Debian's libprotobuf: the official
// LibTorch builds nmtzoo must keep working with bundle a protobuf of their own and export its
// symbols (pytorch/pytorch#14573), so a second one in the process risks the clash the
// SentencePiece shim exists for; and the generated code of TensorBoard's proto files would cost
// every build more than these ~100 lines.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nmtzoo {

using Scalars = std::vector<std::pair<std::string, double>>;  // tag, value

// One record as read back.
struct TensorBoardEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;  // the first record's only
  Scalars scalars;           // float precision, as stored
  uint64_t end = 0;          // the offset of the byte after its frame
};

// A run folder's event file: events.out.tfevents.<seconds>.<host> in `dir`, the one found there
// or a new one. Writes are appended and flushed at once.
class TensorBoardEvents {
 public:
  explicit TensorBoardEvents(std::string dir);
  // Drops the records of steps after `step` and a record cut short by a crash, so a run resumed
  // from a checkpoint of `step` appends without repeating a step. Throws IoError.
  void start_at(int64_t step);
  // One record of `scalars` at `step`, stamped with the current time. Throws IoError.
  void write(int64_t step, const Scalars& scalars);
  // "" until the first start_at or write.
  const std::string& path() const { return path_; }

 private:
  void open();
  void append(const std::string& record);

  std::string dir_;
  std::string path_;
};

// Every whole record of an event file in order, up to a record cut short or whose checksum fails.
// Throws IoError when unreadable, or naming the record's offset when one is not an Event.
std::vector<TensorBoardEvent> read_tensorboard_events(const std::string& path);

}  // namespace nmtzoo
