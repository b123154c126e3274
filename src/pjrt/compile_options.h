//===- pjrt/compile_options.h - CompileOptionsProto bytes and XLA flags -===//
//
// PJRT_Client_Compile takes a serialized `xla.CompileOptionsProto`. This project builds it
// with the classes protoc generates from pjrt/proto/compile_options.proto, our
// wire-compatible declaration of the fields it needs (`../shared/reference/pjrt.md`
// section 2):
//
//   CompileOptionsProto
//     3: executable_build_options  ExecutableBuildOptionsProto
//          1: device_ordinal   int64  (-1 = unset: the default device assignment)
//          4: num_replicas     int64  (1)
//          5: num_partitions   int64  (1)
//     7: env_option_overrides      map<string, OptionOverrideProto>  (per-compile XLA
//          flags: DebugOptions field names, no leading "--")
//   OptionOverrideProto: oneof { 1: string_field; 2: bool_field }
//
// proto3 leaves a field equal to 0 off the wire, which XLA reads as the same 0.
// debug_options is never written (it would replace XLA's defaults wholesale); XLA starts
// from its defaults plus the process's XLA_FLAGS and applies the overrides on top.
// A value "true"/"false" (any case) is sent as bool_field, anything else as
// string_field, which XLA parses by the field's type (ints, floats, enum names or
// numbers, comma-separated lists). An unknown flag name makes the compile fail with
// INVALID_ARGUMENT "No such compile option" from the plugin.
//
// Output is deterministic: overrides are written in key order. Thread safety: free
// functions, no shared state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace rs::pjrt {

/// The subset of CompileOptionsProto this project sends.
struct CompileOptionsSpec {
  /// ExecutableBuildOptionsProto.device_ordinal; -1 = let PJRT pick (the first device).
  int64_t device_ordinal = -1;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  /// Per-compile XLA flags: DebugOptions field name -> value text.
  std::map<std::string, std::string> env_option_overrides;
};

/// Serializes `spec` as CompileOptionsProto wire bytes (deterministic: map entries in key
/// order). With no overrides and the defaults this is the 17 bytes `1A 0F 08 FF FF FF FF FF FF FF
/// FF FF 01 20 01 28 01`.
std::string encodeCompileOptions(const CompileOptionsSpec &spec);

/// Parses XLA flags written as in XLA_FLAGS: whitespace-separated `--name=value` tokens
/// (a bare `--name` means `--name=true`). Later tokens override earlier ones.
/// Errors: InvalidArgument naming the token when it does not start with "--", has an
/// empty name, or the name has characters other than [a-z0-9_].
Result<std::map<std::string, std::string>> parseXlaFlags(std::string_view text);

/// Renders overrides back as `--a=1 --b=true` (key order), for logs.
std::string formatXlaFlags(const std::map<std::string, std::string> &flags);

} // namespace rs::pjrt
