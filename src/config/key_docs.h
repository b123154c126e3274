//===- config/key_docs.h - docs/configuration.md from the key tables ------===//
//
// The configuration page is generated: its key tables come from the rows of
// config/keys.h (default, values, variable, description), its prose from key_docs.cc.
// `reactant-server config docs` prints it; test/config/config_docs_test.cc fails when the
// committed docs/configuration.md differs.
//
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace rs::config {

/// The whole of docs/configuration.md (Markdown, ending in a newline).
std::string configurationDocs();

} // namespace rs::config
