//===- fuzz/mlir_parser_fuzz.cc - StableHLO text parser ---------------------===//
//
// Parses the input as a module; a module that parses is printed in generic form and that
// text must parse again (the printer's promise, ir/printer.h).
//
//===----------------------------------------------------------------------===//
#include "ir/parser.h"
#include "ir/printer.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  rs::Result<rs::ir::Module> m = rs::ir::parseModule(text, "fuzz.mlir");
  if (!m.isOk())
    return 0;
  std::string printed = rs::ir::printGeneric(*m);
  rs::Result<rs::ir::Module> again = rs::ir::parseModule(printed, "printed.mlir");
  if (!again.isOk())
    std::abort(); // printed generic form must parse
  return 0;
}
