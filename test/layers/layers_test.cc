//===- test/layers/layers_test.cc - The layer table holds -------------------===//
//
// DESIGN.md "Layers": a file may include only its own layer and the layers below it that
// the table allows. The table is src/layers.txt. These tests read every `#include
// "<layer>/..."` under src/ (and the private-header rule also under fuzz/, bench/ and test/)
// and every src/<layer>/CMakeLists.txt, and fail naming file:line and the edge.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = RS_SOURCE_DIR;

/// src/layers.txt: each layer and the layers it may include besides itself.
struct LayerTable {
  std::vector<std::string> layers; // bottom up
  std::map<std::string, std::set<std::string>> allowed;
  std::vector<std::string> problems; // lines the table cannot be read from
};

std::vector<std::string> words(const std::string &line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

LayerTable readTable(const fs::path &path) {
  LayerTable t;
  std::ifstream in(path);
  if (!in) {
    t.problems.push_back(path.string() + ": cannot be read");
    return t;
  }
  std::set<std::string> below;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    std::vector<std::string> w = words(line);
    if (w.empty())
      continue;
    const std::string where = path.string() + ":" + std::to_string(n);
    if (w[0] == "tier") {
      for (size_t i = 1; i < w.size(); ++i) {
        t.layers.push_back(w[i]);
        t.allowed[w[i]] = below;
      }
      below.insert(w.begin() + 1, w.end());
    } else if (w[0] == "allow" && w.size() >= 3 && t.allowed.count(w[1])) {
      for (size_t i = 2; i < w.size(); ++i) {
        if (!t.allowed.count(w[i]))
          t.problems.push_back(where + ": unknown layer '" + w[i] + "'");
        t.allowed[w[1]].insert(w[i]);
      }
    } else {
      t.problems.push_back(where + ": expected 'tier LAYER...' or 'allow LAYER LAYER...', got '" +
                           line + "'");
    }
  }
  return t;
}

const LayerTable &table() {
  static const LayerTable t = readTable(kRoot / "src" / "layers.txt");
  return t;
}

/// One `#include "<first>/<rest>"` of a file.
struct Include {
  fs::path file; // relative to the source root
  int line = 0;
  std::string header; // as written
  std::string first;  // its first path component
};

bool isSource(const fs::path &p) {
  const std::string ext = p.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".cpp" || ext == ".in";
}

std::vector<Include> includesUnder(const std::string &top) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*"([^"]+)\")");
  std::vector<Include> out;
  const fs::path dir = kRoot / top;
  if (!fs::exists(dir))
    return out;
  std::vector<fs::path> files;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && isSource(e.path()))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files) {
    std::ifstream in(f);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude))
        continue;
      const std::string header = m[1];
      const size_t slash = header.find('/');
      if (slash == std::string::npos)
        continue;
      out.push_back({fs::relative(f, kRoot), n, header, header.substr(0, slash)});
    }
  }
  return out;
}

/// The layer of a file under src/ ("" for src/ itself).
std::string layerOf(const fs::path &file) {
  auto it = file.begin();
  if (it == file.end() || *it != "src" || ++it == file.end())
    return "";
  const fs::path next = *it;
  return ++it == file.end() ? "" : next.string();
}

/// Whether a file under src/<layer>/ is part of rs_<layer>: every file but those of bin/, the
/// executables' mains (cmake/rs_layer.cmake).
bool inLibrary(const fs::path &file) {
  auto it = file.begin();
  for (int i = 0; i < 2 && it != file.end(); ++i)
    ++it;
  fs::path rest;
  for (; it != file.end(); ++it)
    rest /= *it;
  return rest.begin() == rest.end() || std::next(rest.begin()) == rest.end() ||
         *rest.begin() != "bin";
}

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += s + "\n";
  return out;
}

TEST(LayerTable, ReadsAndNamesEveryFolderOfSrc) {
  const LayerTable &t = table();
  EXPECT_EQ(joined(t.problems), "");
  std::vector<std::string> problems;
  for (const auto &e : fs::directory_iterator(kRoot / "src"))
    if (e.is_directory() && !t.allowed.count(e.path().filename().string()))
      problems.push_back("src/" + e.path().filename().string() +
                         ": a folder that src/layers.txt does not name");
  for (const std::string &layer : t.layers)
    if (!fs::is_directory(kRoot / "src" / layer))
      problems.push_back("src/layers.txt: layer '" + layer + "' has no folder src/" + layer);
  EXPECT_EQ(joined(problems), "");
}

TEST(LayerTable, EveryIncludeInSrcIsAllowed) {
  const LayerTable &t = table();
  std::vector<std::string> problems;
  for (const Include &inc : includesUnder("src")) {
    const std::string from = layerOf(inc.file);
    if (!t.allowed.count(inc.first) || from == inc.first)
      continue; // not a layer's header ("fmt/core.h"), or its own layer
    const std::set<std::string> &ok = t.allowed.at(from);
    if (!ok.count(inc.first))
      problems.push_back(inc.file.string() + ":" + std::to_string(inc.line) + ": " + from + " -> " +
                         inc.first + " (" + inc.header + ") is not allowed by src/layers.txt");
  }
  EXPECT_EQ(joined(problems), "");
}

TEST(LayerTable, PrivateHeadersStayInTheirFolder) {
  // "<layer>/x_impl.h" is internal to src/<layer>/ (and its tests in test/<layer>/).
  std::vector<std::string> problems;
  for (const char *top : {"src", "fuzz", "bench", "test"})
    for (const Include &inc : includesUnder(top)) {
      if (inc.header.size() < 7 || inc.header.compare(inc.header.size() - 7, 7, "_impl.h") != 0)
        continue;
      auto it = inc.file.begin();
      const std::string first = it->string();
      const std::string second = ++it != inc.file.end() ? it->string() : "";
      if ((first == "src" || first == "test") && second == inc.first)
        continue;
      problems.push_back(inc.file.string() + ":" + std::to_string(inc.line) + ": includes " +
                         inc.header + ", private to src/" + inc.first + "/");
    }
  EXPECT_EQ(joined(problems), "");
}

/// The words of `rs_layer(<layer> DEPS ...)` in src/<layer>/CMakeLists.txt after DEPS.
std::vector<std::string> declaredDeps(const std::string &layer, std::string *problem) {
  std::ifstream in(kRoot / "src" / layer / "CMakeLists.txt");
  std::string text, line;
  while (std::getline(in, line)) {
    if (size_t hash = line.find('#'); hash != std::string::npos)
      line.resize(hash);
    text += line + "\n";
  }
  const std::regex call("rs_layer\\(\\s*" + layer + "\\s+DEPS([^)]*)\\)");
  std::smatch m;
  if (!std::regex_search(text, m, call)) {
    *problem = "src/" + layer + "/CMakeLists.txt: no rs_layer(" + layer + " DEPS ...)";
    return {};
  }
  return words(m[1]);
}

TEST(LayerTable, CMakeDepsAreTheLayersIncluded) {
  const LayerTable &t = table();
  std::map<std::string, std::set<std::string>> included;
  for (const Include &inc : includesUnder("src")) {
    const std::string from = layerOf(inc.file);
    if (t.allowed.count(from) && t.allowed.count(inc.first) && from != inc.first &&
        inLibrary(inc.file))
      included[from].insert(inc.first);
  }
  std::vector<std::string> problems;
  for (const std::string &layer : t.layers) {
    std::string problem;
    std::set<std::string> declared;
    for (const std::string &w : declaredDeps(layer, &problem))
      if (w.rfind("rs_", 0) == 0 && t.allowed.count(w.substr(3)))
        declared.insert(w.substr(3));
    if (!problem.empty()) {
      problems.push_back(problem);
      continue;
    }
    for (const std::string &d : declared)
      if (!included[layer].count(d))
        problems.push_back("src/" + layer + "/CMakeLists.txt: DEPS rs_" + d + ", but no file of " +
                           layer + "/ includes a " + d + "/ header");
    for (const std::string &d : included[layer])
      if (!declared.count(d))
        problems.push_back("src/" + layer + "/CMakeLists.txt: " + layer + "/ includes " + d +
                           "/ headers, but DEPS lacks rs_" + d);
  }
  EXPECT_EQ(joined(problems), "");
}

TEST(LayerTable, CMakeDepsOnLibrariesAreUsed) {
  // A third-party library in DEPS is one some file of the layer includes.
  const std::map<std::string, std::vector<std::string>> kHeaders = {
      {"OpenSSL::Crypto", {"openssl/"}},
      {"yaml-cpp", {"yaml-cpp/"}},
      {"nlohmann_json::nlohmann_json", {"nlohmann/"}},
      {"spdlog::spdlog", {"spdlog/"}},
      {"Eigen3::Eigen", {"Eigen/", "unsupported/Eigen/"}},
      {"PkgConfig::HTTPLIB", {"httplib.h"}},
      {"gRPC::grpc++", {"grpcpp/"}},
      {"prometheus-cpp::core", {"prometheus/"}},
      {"CLI11::CLI11", {"CLI/"}},
      {"PkgConfig::LIBARCHIVE", {"archive.h"}},
  };
  static const std::regex kSystem(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::vector<std::string> problems;
  for (const std::string &layer : table().layers) {
    std::string problem;
    const std::vector<std::string> deps = declaredDeps(layer, &problem);
    std::set<std::string> headers;
    for (const auto &e : fs::recursive_directory_iterator(kRoot / "src" / layer)) {
      if (!e.is_regular_file() || !isSource(e.path()) || !inLibrary(fs::relative(e.path(), kRoot)))
        continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, kSystem))
          headers.insert(m[1]);
      }
    }
    for (const std::string &dep : deps) {
      auto known = kHeaders.find(dep);
      if (known == kHeaders.end())
        continue;
      const bool used = std::any_of(headers.begin(), headers.end(), [&](const std::string &h) {
        return std::any_of(known->second.begin(), known->second.end(),
                           [&](const std::string &prefix) { return h.rfind(prefix, 0) == 0; });
      });
      if (!used)
        problems.push_back("src/" + layer + "/CMakeLists.txt: DEPS " + dep + ", but no file of " +
                           layer + "/ includes " + known->second.front());
    }
  }
  EXPECT_EQ(joined(problems), "");
}

} // namespace
