//===- fuzz/vhlo_reader_fuzz.cc - StableHLO portable artifact reader --------===//
//
// Reads the input as a portable artifact (ir/bytecode.h): first its header and tables,
// then the whole module. The reader must return an error or a module, never crash, hang
// or touch memory outside the input. A module that decodes is printed in generic form and
// that text must parse (the printer's promise, ir/printer.h).
//
//===----------------------------------------------------------------------===//
#include "ir/bytecode.h"
#include "ir/parser.h"
#include "ir/printer.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  (void)rs::ir::isBytecode(bytes);
  rs::Result<rs::ir::PortableArtifactInfo> info =
      rs::ir::readPortableArtifactInfo(bytes, "fuzz.mlirbc");
  rs::Result<rs::ir::Module> m = rs::ir::readPortableArtifact(bytes, "fuzz.mlirbc");
  if (!m.isOk())
    return 0;
  if (!info.isOk())
    std::abort(); // a module that decodes has a readable header
  std::string printed = rs::ir::printGeneric(*m);
  rs::Result<rs::ir::Module> again = rs::ir::parseModule(printed, "printed.mlir");
  if (!again.isOk())
    std::abort(); // printed generic form must parse
  return 0;
}
