//===- test/common/temp_dir.cc - A temporary directory for one test --------===//
#include "common/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <system_error>

namespace rs::testing {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string &prefix) {
  std::string tmpl = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    ADD_FAILURE() << "mkdtemp " << tmpl << " failed";
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

} // namespace rs::testing
