//===- pjrt/compile_options.cc - CompileOptionsProto bytes and XLA flags ---===//
#include "pjrt/compile_options.h"

#include "pjrt/proto/compile_options.pb.h"
#include "support/text.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cctype>

namespace rs::pjrt {

std::string encodeCompileOptions(const CompileOptionsSpec &spec) {
  xla::CompileOptionsProto proto;
  xla::ExecutableBuildOptionsProto *build = proto.mutable_executable_build_options();
  build->set_device_ordinal(spec.device_ordinal);
  build->set_num_replicas(spec.num_replicas);
  build->set_num_partitions(spec.num_partitions);
  auto &overrides = *proto.mutable_env_option_overrides();
  for (const auto &[name, value] : spec.env_option_overrides) {
    xla::OptionOverrideProto &o = overrides[name];
    const std::string l = lower(value);
    if (l == "true" || l == "false")
      o.set_bool_field(l == "true"); // a oneof member is written even when false
    else
      o.set_string_field(value);
  }
  // Deterministic serialization writes map entries in key order (a plain
  // SerializeToString may use any order), so equal specs give equal bytes.
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    proto.SerializeToCodedStream(&coded);
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
