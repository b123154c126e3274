//===- test/ir/tools/emit_printed.cc - modules for the MLIR cross-check ---===//
//
// rs_ir_emit_printed OUT_DIR FILE.mlir...: for every `// -----` chunk of every file
// that parses, writes OUT_DIR/<n>.orig.mlir (the chunk) and OUT_DIR/<n>.printed.mlir
// (printGeneric of it) plus OUT_DIR/manifest.txt ("<n> <file>:<line>"). The pairs feed
// test/ir/tools/mlir_crosscheck.py, which runs where MLIR's Python bindings are
// installed (the GPU machine's jaxlib). Chunks that do not parse are reported on stderr.
//
//===----------------------------------------------------------------------===//
#include "ir/parser.h"
#include "ir/printer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR FILE.mlir...\n", argv[0]);
    return 2;
  }
  std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  std::ofstream manifest(out / "manifest.txt");
  int n = 0, failed = 0;
  for (int a = 2; a < argc; ++a) {
    std::ifstream in(argv[a], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    std::string content = text.str();
    for (const auto &[line, chunk] : rs::ir::splitInputFile(content)) {
      rs::Result<rs::ir::Module> m = rs::ir::parseModule(chunk, argv[a], line);
      if (!m.isOk()) {
        std::fprintf(stderr, "%s\n", m.status().toString().c_str());
        ++failed;
        continue;
      }
      std::string id = std::to_string(n++);
      std::ofstream(out / (id + ".orig.mlir"), std::ios::binary) << chunk;
      std::ofstream(out / (id + ".printed.mlir"), std::ios::binary) << rs::ir::printGeneric(*m);
      manifest << id << " " << argv[a] << ":" << line << "\n";
    }
  }
  std::printf("%d modules written, %d chunks failed to parse\n", n, failed);
  return failed ? 1 : 0;
}
