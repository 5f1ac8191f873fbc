#include "core/io/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <ostream>

#include "core/io/text_file.h"
#include "tests/support/test_support.h"

namespace nmtzoo {
namespace {

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
            std::string::npos) << message;
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
  const std::string multibyte = std::string(240, 'a') + "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9";  // 254 bytes
  for (const std::string& name : {long_name, long_name + "bcde", multibyte, std::string("short")}) {
    write_file_atomically(dir.path(name), [&](std::ostream& out) { out << name.size(); });
    EXPECT_EQ(testing::read_text(dir.path(name)), std::to_string(name.size()));
  }
  EXPECT_EQ(files_in(dir.path()), 4u);  // no temporary left behind
  const std::string a = std::filesystem::path(temporary_path_beside(dir.path(long_name + "1"))).filename();
  const std::string b = std::filesystem::path(temporary_path_beside(dir.path(long_name + "2"))).filename();
  EXPECT_NE(a, b);
  EXPECT_LE(a.size(), 255u);
}

TEST(AtomicWrite, StaleTemporaryFilesOfDeadProcessesAreRemoved) {
  TempDir dir;
  // PID 2^22 + 1 is above Linux's pid_max limit, so no such process can exist.
  testing::write_text(dir.path(".checkpoint_4.pt.tmp.4194305"), "partial");
  testing::write_text(dir.path(".curve_valid_bleu.svg.tmp.4194305"), "partial");
  const std::string own = dir.path(".checkpoint_5.pt.tmp." + std::to_string(getpid()));
  testing::write_text(own, "being written");
  testing::write_text(dir.path("checkpoint_4.pt"), "kept");
  EXPECT_EQ(remove_stale_temporary_files(dir.path()), 2u);
  EXPECT_TRUE(std::filesystem::exists(own));
  EXPECT_TRUE(std::filesystem::exists(dir.path("checkpoint_4.pt")));
  EXPECT_EQ(files_in(dir.path()), 2u);
}

}  // namespace
}  // namespace nmtzoo
