//===- ir/bytecode.cc - StableHLO portable artifacts: public entry points -===//
#include "ir/bytecode.h"

#include "ir/bytecode_impl.h"

namespace rs::ir {
namespace {

std::span<const uint8_t> asBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

} // namespace

bool isBytecode(std::string_view bytes) {
  return bytes.starts_with("ML\xef"
                           "R");
}

Result<PortableArtifactInfo> readPortableArtifactInfo(std::string_view bytes,
                                                      std::string_view file) {
  bc::Container c;
  RS_RETURN_IF_ERROR(bc::readContainer(file, asBytes(bytes), &c));
  PortableArtifactInfo info;
  info.bytecode_version = c.version;
  info.producer = c.producer;
  info.vhlo_version = c.vhlo_version;
  for (const bc::OpName &n : c.op_names)
    info.op_names.push_back(n.name);
  return info;
}

Result<Module> readPortableArtifact(std::string_view bytes, std::string_view file) {
  bc::Container c;
  RS_RETURN_IF_ERROR(bc::readContainer(file, asBytes(bytes), &c));
  bc::RawOp root;
  int32_t num_values = 0;
  RS_RETURN_IF_ERROR(bc::readIR(c, &root, &num_values));
  bc::Entries entries(c);
  Module m;
  RS_RETURN_IF_ERROR(bc::legalizeModule(c, entries, root, num_values, &m));
  return m;
}

} // namespace rs::ir
