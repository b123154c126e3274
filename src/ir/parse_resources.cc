//===- ir/parse_resources.cc - StableHLO parser: dense resources ----------===//
//
// `dense_resource<name> : tensor<...>` constants and the `{-# dialect_resources: {
// builtin: { name: "0x..." } } #-}` trailer that holds their bytes (4 bytes of
// alignment, then the little-endian data). Only the builtin group's hex blobs are kept;
// other groups and non-string entries are read and ignored.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

namespace rs::ir::detail {

Status Parser::parseDenseResource(Attribute *out, Type *type_out) {
  advance(); // dense_resource
  RS_RETURN_IF_ERROR(expect(Tok::kLess, "'<'"));
  if (!is(Tok::kBareId) && !is(Tok::kString))
    return errorExpected("resource name");
  std::string name(tok().text);
  size_t name_pos = tok().pos;
  advance();
  RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  size_t type_pos = tok().pos;
  Type t;
  RS_RETURN_IF_ERROR(parseType(&t));
  if (type_out)
    *type_out = t;
  auto it = resources_.find(name);
  if (it == resources_.end())
    return errorAt(name_pos, "unknown dense resource '" + name + "'");
  if (!t.isTensor() || t.element == DType::kInvalid)
    return errorAt(type_pos, "expected static tensor type for dense_resource");
  Result<int64_t> count = checkedElementCount(t.shape);
  int64_t esize = dtypeSize(t.element);
  if (!count.isOk() || *count > kMaxDenseBytes / esize)
    return errorAt(type_pos, "dense resource of type " + t.toString() + " is too large");
  const std::string &blob = it->second; // 4 bytes of alignment, then the data
  if (blob.size() < 4 || static_cast<int64_t>(blob.size() - 4) != *count * esize)
    return errorAt(name_pos, "dense resource '" + name + "' has " +
                                 std::to_string(blob.size() < 4 ? 0 : blob.size() - 4) +
                                 " bytes, type " + t.toString() + " needs " +
                                 std::to_string(*count * esize));
  *out = Attribute();
  out->kind = AttrKind::kDenseElements;
  out->tensor =
      Tensor::copyOf(t.element, t.shape,
                     std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(blob.data()) + 4,
                                              blob.size() - 4));
  out->tensor_type = std::make_shared<Type>(std::move(t));
  return Status::ok();
}

// {-# dialect_resources: { builtin: { name: "0x..." } } #-}
Status Parser::parseResources() {
  RS_RETURN_IF_ERROR(expect(Tok::kMetaOpen, "'{-#'"));
  while (!is(Tok::kMetaClose)) {
    if (!is(Tok::kBareId))
      return errorExpected("resource section name");
    bool dialect = tok().text == "dialect_resources";
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
    while (!is(Tok::kRBrace)) {
      if (!is(Tok::kBareId))
        return errorExpected("resource group");
      bool builtin = dialect && tok().text == "builtin";
      advance();
      RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
      RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
      while (!is(Tok::kRBrace)) {
        if (!is(Tok::kBareId) && !is(Tok::kString))
          return errorExpected("resource name");
        std::string key(tok().text);
        advance();
        RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
        if (is(Tok::kString)) {
          std::string hex, bytes;
          if (builtin && decodeStringLiteral(tok().text, &hex) && decodeHexBlob(hex, &bytes))
            resources_[key] = std::move(bytes);
          advance();
        } else {
          Attribute ignored;
          RS_RETURN_IF_ERROR(parseAttribute(&ignored));
        }
        if (!consumeIf(Tok::kComma))
          break;
      }
      RS_RETURN_IF_ERROR(expect(Tok::kRBrace, "'}'"));
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRBrace, "'}'"));
    if (!consumeIf(Tok::kComma))
      break;
  }
  return expect(Tok::kMetaClose, "'#-}'");
}

} // namespace rs::ir::detail
