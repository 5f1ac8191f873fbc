// SPDX-License-Identifier: MIT
#include "torch_free/io/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>

#include "tests/support/test_support.h"
#include "torch_free/io/text_file.h"

namespace nmtzoo {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

size_t files_in(const std::string& dir) {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

TEST(AtomicWrite, ReplacesTheFile) {
  TempDir dir;
  const std::string path = dir.path("out/model.pt");
  write_file_atomically(path, [](std::ostream& out) { out << "first"; });
  write_file_atomically(path, [](std::ostream& out) { out << "second"; });
  EXPECT_EQ(testing::read_text(path), "second");
  EXPECT_EQ(files_in(dir.path("out")), 1u);
}

TEST(AtomicWrite, FailedWriteKeepsThePreviousFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.path("model.pt");
  write_file_atomically(path, [](std::ostream& out) { out << "good"; });
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "partial";
                                       throw IoError("disk full");
                                     }),
               IoError);
  EXPECT_EQ(testing::read_text(path), "good");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicWrite, StreamFailureLikeAFullDiskIsAnErrorAndKeepsThePreviousFile) {
  TempDir dir;
  const std::string path = dir.path("model.pt");
  write_file_atomically(path, [](std::ostream& out) { out << "good"; });
  // A stream that fails like a full disk: badbit after the first write.
  EXPECT_THROW(write_file_atomically(path,
                                     [](std::ostream& out) {
                                       out << "partial";
                                       out.setstate(std::ios::badbit);
                                     }),
               IoError);
  EXPECT_EQ(testing::read_text(path), "good");
}

TEST(AtomicWrite, AFileSizeLimitIsAnErrorNamingThePathAndKeepsThePreviousFile) {
  TempDir dir;
  const std::string path = dir.path("model.pt");
  write_file_atomically(path, [](std::ostream& out) { out << "good"; });
  // As `ulimit -f` does, with SIGXFSZ ignored: write() then fails with EFBIG.
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* previous_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string message;
  try {
    write_file_atomically(path, [](std::ostream& out) { out << std::string(100000, 'x'); });
  } catch (const IoError& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous_handler);
  EXPECT_NE(message.find("writing '" + path + "' failed: File too large (disk full?)"),
            std::string::npos)
      << message;
  EXPECT_EQ(testing::read_text(path), "good");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicWrite, ErrorsNameThePathAskedForNotTheTemporaryFile) {
  TempDir dir;
  try {
    write_file_atomically(dir.path(), [](std::ostream& out) { out << "x"; });
    FAIL() << "writing over a directory succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + dir.path() + "': Is a directory");
  }
  try {
    write_file_atomically("/proc/nmtzoo_test.txt", [](std::ostream& out) { out << "x"; });
    FAIL() << "writing into /proc succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write '/proc/nmtzoo_test.txt': ", 0), 0u)
        << e.what();
  }
}

TEST(AtomicWrite, WritesLargerThanTheStreamBufferArriveWhole) {
  TempDir dir;
  const std::string path = dir.path("big.bin");
  std::string expected;
  for (int i = 0; i < 300000; ++i) expected += static_cast<char>('a' + i % 26);
  AtomicFile file(path);
  file.stream() << expected.substr(0, 10);
  file.write(expected.data() + 10, 70000);
  file.stream() << expected.substr(70010);
  file.commit();
  EXPECT_TRUE(testing::read_text(path) == expected);  // not EXPECT_EQ: 300 KB in a failure
}

// A legal name of up to 255 bytes must not fail because the temporary beside it adds a prefix
// and a suffix; two long names sharing their first bytes get different temporaries.
TEST(AtomicWrite, NamesUpToTheFileSystemsLimitCanBeWritten) {
  TempDir dir;
  const std::string long_name = std::string(250, 'a');
  const std::string multibyte =
      std::string(240, 'a') + "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9";  // 254 bytes
  for (const std::string& name : {long_name, long_name + "bcde", multibyte, std::string("short")}) {
    write_file_atomically(dir.path(name), [&](std::ostream& out) { out << name.size(); });
    EXPECT_EQ(testing::read_text(dir.path(name)), std::to_string(name.size()));
  }
  EXPECT_EQ(files_in(dir.path()), 4u);  // no temporary left behind
  const std::string a =
      std::filesystem::path(temporary_path_beside(dir.path(long_name + "1"))).filename();
  const std::string b =
      std::filesystem::path(temporary_path_beside(dir.path(long_name + "2"))).filename();
  EXPECT_NE(a, b);
  EXPECT_LE(a.size(), 255u);
}

TEST(AtomicWrite, StaleTemporaryFilesOfDeadProcessesAreRemoved) {
  TempDir dir;
  // PID 2^22 + 1 is above Linux's pid_max limit, so no such process can exist.
  const std::vector<std::string> stale{
      ".checkpoint_4.pt.tmp.4194305", ".curve_valid_bleu.svg.tmp.4194305",
      "." + std::string(220, 'a') + "~0123456789abcdef.tmp.4194305",  // a long name's, hashed
      ".spm.tmp.4194305.model", ".spm.tmp.4194305.vocab"};  // the tokenizer trainer's scratch
  for (const std::string& name : stale) testing::write_text(dir.path(name), "partial");
  // Not nmtzoo's, or of a live process: kept.
  const std::vector<std::string> kept{".checkpoint_5.pt.tmp." + std::to_string(getpid()),
                                      ".init.tmp.1",
                                      "checkpoint_4.pt",
                                      "notes.tmp.4194305",
                                      ".notes.tmp.04194305",
                                      ".notes.tmp.4194305.txt",
                                      ".notes.tmp.99999999999",
                                      ".notes.tmp.4194305x"};
  for (const std::string& name : kept) testing::write_text(dir.path(name), "kept");
  fs::create_directory(dir.path(".folder.tmp.4194305"));
  fs::create_symlink("checkpoint_4.pt", dir.path(".link.tmp.4194305"));
  EXPECT_EQ(remove_stale_temporary_files(dir.path()), stale.size());
  for (const std::string& name : stale) EXPECT_FALSE(fs::exists(dir.path(name))) << name;
  for (const std::string& name : kept) EXPECT_TRUE(fs::exists(dir.path(name))) << name;
  EXPECT_EQ(files_in(dir.path()), kept.size() + 2);
}

// A SIGKILL leaves a temporary behind: the next atomic write in that folder removes it.
TEST(AtomicWrite, TheFirstWriteInAFolderRemovesWhatKilledProcessesLeft) {
  TempDir dir;
  testing::write_text(dir.path(".out.txt.tmp.4194305"), "partial");
  testing::write_text(dir.path(".other.txt.tmp.1"), "being written by a live process");
  write_file_atomically(dir.path("out.txt"), [](std::ostream& out) { out << "whole"; });
  EXPECT_FALSE(fs::exists(dir.path(".out.txt.tmp.4194305")));
  EXPECT_TRUE(fs::exists(dir.path(".other.txt.tmp.1")));
  EXPECT_EQ(files_in(dir.path()), 2u);
}

// What a stop signal does (libtorch/runtime, end_on_stop_signal_removing_temporaries) before the
// process ends: the temporaries being written go, and nothing replaces the destination.
TEST(AtomicWrite, TheTemporariesOfThisProcessCanBeRemovedBeforeItEnds) {
  TempDir dir;
  testing::write_text(dir.path("out.txt"), "old");
  AtomicFile file(dir.path("out.txt"));
  file.stream() << "partial";
  EXPECT_EQ(files_in(dir.path()), 2u);
  remove_temporary_files_of_this_process();
  EXPECT_EQ(files_in(dir.path()), 1u);
  EXPECT_THROW(file.commit(), IoError);
  EXPECT_EQ(testing::read_text(dir.path("out.txt")), "old");
}

// A FIFO is written through to its reader (a regular file renamed over it would leave the reader
// waiting forever). The reader does not block, so that a wrong writer cannot hang the test.
TEST(AtomicWrite, AFifoIsWrittenThroughToItsReaderAndStaysAFifo) {
  TempDir dir;
  const std::string fifo = dir.path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  std::string expected;  // more than a pipe holds, so that the writer waits for the reader
  for (int i = 0; i < 300000; ++i) expected += static_cast<char>('a' + i % 26);
  std::atomic<bool> done{false};
  std::string error;
  std::thread writer([&] {
    try {
      write_file_atomically(fifo, [&](std::ostream& out) { out << expected; });
    } catch (const std::exception& e) {
      error = e.what();
    }
    done = true;
  });
  std::string received;
  std::vector<char> buffer(1 << 16);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const bool finished = done;  // read first: what it wrote is in the pipe by then
    const ssize_t n = ::read(reader, buffer.data(), buffer.size());
    if (n > 0) {
      received.append(buffer.data(), static_cast<size_t>(n));
    } else if (finished) {
      break;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  writer.join();
  ::close(reader);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(received == expected) << received.size() << " bytes of " << expected.size();
  struct stat status {};
  ASSERT_EQ(::lstat(fifo.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode));
  EXPECT_EQ(files_in(dir.path()), 1u);
}

// A character device to write to: /dev/<name> itself when unprivileged, where the old code could
// only fail; as root, where a regression would replace /dev/<name>, a node of the same device
// made in `dir`. "" when that cannot be made or opened (no CAP_MKNOD, a nodev file system).
std::string character_device(const TempDir& dir, const std::string& name, unsigned minor) {
  if (::geteuid() != 0) return "/dev/" + name;
  const std::string node = dir.path(name);
  if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return "";
  const int fd = ::open(node.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return "";
  ::close(fd);
  return node;
}

TEST(AtomicWrite, ACharacterDeviceIsWrittenInPlaceNotReplaced) {
  TempDir dir;
  const std::string null = character_device(dir, "null", 3);
  const std::string full = character_device(dir, "full", 7);
  if (null.empty() || full.empty()) {
    // As root only /dev's own nodes would be left, and a regression would replace them.
    const char* why =
        "root, but no device node can be made here (no CAP_MKNOD or a nodev file system)";
    if (testing::require_all()) FAIL() << why << " (NMTZOO_REQUIRE_ALL=1)";
    GTEST_SKIP() << why;
  }
  const size_t files = files_in(dir.path());
  write_file_atomically(null, [](std::ostream& out) { out << "translations\n"; });
  EXPECT_TRUE(fs::is_character_file(null));
  // Through a symbolic link too: the link stays, the device is written.
  fs::create_symlink(null, dir.path("sink"));
  write_file_atomically(dir.path("sink"), [](std::ostream& out) { out << "translations\n"; });
  EXPECT_TRUE(fs::is_symlink(dir.path("sink")));
  EXPECT_TRUE(fs::is_character_file(null));
  // A device's failed write is reported naming the path.
  std::string message;
  try {
    write_file_atomically(full, [](std::ostream& out) { out << std::string(100000, 'x'); });
  } catch (const IoError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "writing '" + full + "' failed: No space left on device (disk full?)");
  EXPECT_TRUE(fs::is_character_file(full));
  EXPECT_EQ(files_in(dir.path()), files + 1);  // the link; no temporary
}

TEST(AtomicWrite, ASymbolicLinkStaysAndTheFileItLeadsToIsReplaced) {
  TempDir dir;
  fs::create_directory(dir.path("data"));
  testing::write_text(dir.path("data/real.txt"), "old");
  fs::create_symlink("data/real.txt", dir.path("link.txt"));
  fs::create_symlink(dir.path("link.txt"), dir.path("chain.txt"));  // absolute, to a link
  write_file_atomically(dir.path("link.txt"), [](std::ostream& out) { out << "new"; });
  EXPECT_EQ(fs::read_symlink(dir.path("link.txt")), fs::path("data/real.txt"));
  EXPECT_EQ(testing::read_text(dir.path("data/real.txt")), "new");
  write_file_atomically(dir.path("chain.txt"), [](std::ostream& out) { out << "newer"; });
  EXPECT_TRUE(fs::is_symlink(dir.path("chain.txt")));
  EXPECT_EQ(testing::read_text(dir.path("data/real.txt")), "newer");
  // A dangling link gets the file it names.
  fs::create_symlink("data/made.txt", dir.path("dangling.txt"));
  write_file_atomically(dir.path("dangling.txt"), [](std::ostream& out) { out << "made"; });
  EXPECT_TRUE(fs::is_symlink(dir.path("dangling.txt")));
  EXPECT_EQ(testing::read_text(dir.path("data/made.txt")), "made");
  // A loop is an error naming the path.
  fs::create_symlink("loop_b", dir.path("loop_a"));
  fs::create_symlink("loop_a", dir.path("loop_b"));
  try {
    write_file_atomically(dir.path("loop_a"), [](std::ostream& out) { out << "x"; });
    FAIL() << "writing through a loop of links succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write '" + dir.path("loop_a") + "': Too many levels of symbolic links");
  }
  EXPECT_EQ(files_in(dir.path("data")), 2u);  // the temporaries went beside the targets
  EXPECT_EQ(files_in(dir.path()), 6u);
}

TEST(AtomicWrite, AnOutputThatIsAnInputIsRefusedNamingBoth) {
  TempDir dir;
  const std::string checkpoint = dir.path("M.pt");
  testing::write_text(checkpoint, "checkpoint");
  fs::create_hard_link(checkpoint, dir.path("hard.pt"));
  fs::create_symlink("M.pt", dir.path("soft.pt"));
  for (const char* name : {"M.pt", "hard.pt", "soft.pt"}) {
    try {
      check_output_is_not_an_input({"-o", dir.path(name)},
                                   {{"-i", dir.path("in.txt")}, {"-c", checkpoint}});
      FAIL() << name << " was not refused";
    } catch (const IoError& e) {
      EXPECT_EQ(std::string(e.what()), "-o '" + dir.path(name) + "' is the same file as -c '" +
                                           checkpoint +
                                           "': writing it would replace that input; write to "
                                           "another file");
    }
  }
  // Two outputs, neither there yet, are the same file when their paths resolve alike.
  EXPECT_THROW(check_output_is_not_an_input({"--stats", dir.path("sub/../out.txt")},
                                            {{"-o", dir.path("out.txt")}}),
               IoError);
  // Not refused: another file, one not there yet, empty paths, a device.
  testing::write_text(dir.path("in.txt"), "input");
  EXPECT_NO_THROW(check_output_is_not_an_input({"-o", dir.path("in.txt")}, {{"-c", checkpoint}}));
  EXPECT_NO_THROW(check_output_is_not_an_input({"-o", dir.path("new.txt")}, {{"-c", checkpoint}}));
  EXPECT_NO_THROW(check_output_is_not_an_input({"-o", ""}, {{"-c", checkpoint}}));
  EXPECT_NO_THROW(check_output_is_not_an_input({"-o", checkpoint}, {{"-i", ""}}));
  EXPECT_NO_THROW(check_output_is_not_an_input({"--stats", "/dev/null"}, {{"-o", "/dev/null"}}));
  EXPECT_EQ(testing::read_text(checkpoint), "checkpoint");
}

}  // namespace
}  // namespace nmtzoo
