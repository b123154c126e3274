//===- pjrt/compile_options.cc - CompileOptionsProto encoder and XLA flags -===//
#include "pjrt/compile_options.h"
#include "support/text.h"

#include <cctype>

namespace rs::pjrt {
namespace {

// Protobuf wire types (protobuf.dev "Encoding").
constexpr int kVarint = 0;
constexpr int kLen = 2;

void putVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void putTag(std::string &out, int field, int wire_type) {
  putVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

/// An int64 field: negative values take 10 bytes (two's complement as uint64).
void putInt64(std::string &out, int field, int64_t v) {
  putTag(out, field, kVarint);
  putVarint(out, static_cast<uint64_t>(v));
}

void putBytes(std::string &out, int field, std::string_view bytes) {
  putTag(out, field, kLen);
  putVarint(out, bytes.size());
  out.append(bytes);
}

/// OptionOverrideProto for one value: bool_field for true/false, else string_field.
std::string encodeOverride(std::string_view value) {
  std::string out;
  const std::string l = lower(value);
  if (l == "true" || l == "false") {
    putTag(out, 2, kVarint); // a oneof member is written even when false
    putVarint(out, l == "true" ? 1 : 0);
  } else {
    putBytes(out, 1, value);
  }
  return out;
}

} // namespace

std::string encodeCompileOptions(const CompileOptionsSpec &spec) {
  std::string build;
  putInt64(build, 1, spec.device_ordinal);
  putInt64(build, 4, spec.num_replicas);
  putInt64(build, 5, spec.num_partitions);

  std::string out;
  putBytes(out, 3, build);
  for (const auto &[name, value] : spec.env_option_overrides) {
    std::string entry;
    putBytes(entry, 1, name);
    putBytes(entry, 2, encodeOverride(value));
    putBytes(out, 7, entry);
  }
  return out;
}

Result<std::map<std::string, std::string>> parseXlaFlags(std::string_view text) {
  std::map<std::string, std::string> flags;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end])))
      ++end;
    const std::string_view token = text.substr(i, end - i);
    i = end;
    if (token.substr(0, 2) != "--")
      return invalidArgument() << "xla flag '" << token << "' does not start with '--'";
    const std::string_view body = token.substr(2);
    const size_t eq = body.find('=');
    const std::string_view name = body.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "true" : body.substr(eq + 1);
    if (name.empty())
      return invalidArgument() << "xla flag '" << token << "' has an empty name";
    for (char c : name) {
      if (!(std::islower(static_cast<unsigned char>(c)) ||
            std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
        return invalidArgument() << "xla flag '" << token
                                 << "': name may only hold [a-z0-9_], got '" << name << "'";
    }
    flags[std::string(name)] = std::string(value);
  }
  return flags;
}

std::string formatXlaFlags(const std::map<std::string, std::string> &flags) {
  std::string out;
  for (const auto &[name, value] : flags) {
    if (!out.empty())
      out += ' ';
    out += "--" + name + "=" + value;
  }
  return out;
}

} // namespace rs::pjrt
