// SPDX-License-Identifier: MIT
#include "torch_free/io/tensorboard_events.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/test_support.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  return names;
}

std::vector<int64_t> steps(const std::vector<TensorBoardEvent>& events) {
  std::vector<int64_t> out;
  for (const auto& event : events) out.push_back(event.step);
  return out;
}

TEST(TensorBoardEvents, ScalarsReadBackAfterTheFileVersionInOneFileAFolder) {
  TempDir dir;
  TensorBoardEvents(dir.path()).write(1, {{"train/loss", 7.25}, {"train/lr", 1e-4}});
  TensorBoardEvents(dir.path()).write(2, {{"train/loss", 6.5}});  // a new writer: the same file
  const auto files = event_files(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].rfind("events.out.tfevents.", 0), 0u) << files[0];
  const auto events = read_tensorboard_events(dir.path(files[0]));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].step, 0);
  EXPECT_TRUE(events[0].scalars.empty());
  EXPECT_EQ(events[1].step, 1);
  EXPECT_EQ(events[1].scalars,
            (Scalars{{"train/loss", 7.25}, {"train/lr", static_cast<float>(1e-4)}}));
  EXPECT_EQ(events[2].scalars, (Scalars{{"train/loss", 6.5}}));
  EXPECT_GT(events[2].wall_time, 1.7e9);
  EXPECT_GE(events[2].wall_time, events[1].wall_time);
}

TEST(TensorBoardEvents, StartingAtAStepDropsLaterRecordsAndATornTail) {
  TempDir dir;
  TensorBoardEvents writer(dir.path());
  for (int64_t step = 1; step <= 9; ++step) writer.write(step, {{"train/loss", 10.0 - step}});
  const std::string path = writer.path();
  const auto size = fs::file_size(path);
  {
    std::ofstream(path, std::ios::app | std::ios::binary)
        << std::string("\x20\0\0\0\0\0\0\0\x01", 9);
  }

  TensorBoardEvents resumed(dir.path());
  resumed.start_at(6);
  EXPECT_EQ(resumed.path(), path);
  EXPECT_LT(fs::file_size(path), size);
  resumed.write(7, {{"train/loss", 0.5}});
  const auto events = read_tensorboard_events(path);
  EXPECT_EQ(steps(events), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(events.back().scalars, (Scalars{{"train/loss", 0.5}}));
}

TEST(TensorBoardEvents, AFileCutShortInItsFirstRecordStartsOverWithItsVersion) {
  TempDir dir;
  TensorBoardEvents writer(dir.path());
  writer.write(1, {{"train/loss", 1.0}});
  fs::resize_file(writer.path(), 5);
  TensorBoardEvents(dir.path()).start_at(0);
  const auto events = read_tensorboard_events(writer.path());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
}

TEST(TensorBoardEvents, ReadingStopsAtARecordWhoseChecksumFails) {
  TempDir dir;
  TensorBoardEvents writer(dir.path());
  writer.write(1, {{"valid/bleu", 12.5}});
  writer.write(2, {{"valid/bleu", 13.5}});
  const auto events = read_tensorboard_events(writer.path());
  ASSERT_EQ(events.size(), 3u);
  {
    std::fstream file(writer.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(events[1].end) + 20);  // inside the last record
    file.put('\x7f');
  }
  EXPECT_EQ(steps(read_tensorboard_events(writer.path())), (std::vector<int64_t>{0, 1}));
  EXPECT_THROW(read_tensorboard_events(dir.path("missing")), IoError);
}

}  // namespace
}  // namespace nmtzoo
