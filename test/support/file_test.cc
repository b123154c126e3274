//===- test/support/file_test.cc - readWholeFile -----------------------------===//
//
// A file's bytes come back whole; a missing path, a directory and a FIFO are errors that name
// the path (never an exception: std::ifstream throws when it reads a directory).
//
//===----------------------------------------------------------------------===//
#include "support/file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

namespace rs {
namespace {

namespace fs = std::filesystem;

TEST(ReadWholeFile, BytesOrAnErrorNamingThePath) {
  const fs::path dir = fs::temp_directory_path() / ("rs_file_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string file = (dir / "a.bin").string();
  std::string bytes(200000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>(i * 7);
  std::ofstream(file, std::ios::binary) << bytes;
  Result<std::string> r = readWholeFile(file);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(*r, bytes);

  std::ofstream((dir / "empty").string());
  EXPECT_EQ(readWholeFile((dir / "empty").string()).value(), "");

  r = readWholeFile((dir / "missing").string());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(),
            (dir / "missing").string() + ": cannot open: No such file or directory");

  r = readWholeFile(dir.string());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), dir.string() + ": is a directory, not a file");

  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer: a blocking open() would wait forever.
  r = readWholeFile(fifo);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), fifo + ": is not a regular file");
  fs::remove_all(dir);
}

} // namespace
} // namespace rs
