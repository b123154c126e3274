//===- test/common/files.cc - Reading and writing whole files in tests -----===//
#include "common/files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace rs::testing {

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeFile(const std::filesystem::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.good())
    ADD_FAILURE() << "cannot write " << path;
}

void copyBundleFiles(const std::filesystem::path &from, const std::filesystem::path &to) {
  namespace fs = std::filesystem;
  fs::create_directories(to);
  for (const fs::directory_entry &e : fs::directory_iterator(from))
    if (e.is_regular_file())
      fs::copy_file(e.path(), to / e.path().filename(), fs::copy_options::overwrite_existing);
  fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
  for (const fs::directory_entry &e : fs::directory_iterator(to))
    fs::permissions(e.path(), fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::add);
}

} // namespace rs::testing
