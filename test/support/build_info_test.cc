//===- test/support/build_info_test.cc - The build identity -----------------===//
#include "support/build_info.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(ServerBuildTest, DefaultsAndText) {
  const ServerBuild &b = thisBuild();
  EXPECT_FALSE(b.compiler.empty());
  EXPECT_EQ(b.eigen.find('.') != std::string::npos, true) << b.eigen;
  ServerBuild x;
  x.version = "0.1.0";
  x.commit = "abc";
  x.compiler = "GNU 12.2.0";
  x.build_type = "Release";
  x.eigen = "3.4.0";
  EXPECT_EQ(x.toString(),
            "version=0.1.0 commit=abc compiler=GNU 12.2.0 build_type=Release eigen=3.4.0");
  EXPECT_EQ(x.versionText(), "reactant-server 0.1.0\ncommit abc\ncompiler GNU 12.2.0\nbuild type "
                             "Release\neigen 3.4.0\npjrt plugin: none loaded (runtime.backend: "
                             "cuda logs the plugin and its version at startup)\n");
}

} // namespace
} // namespace rs
