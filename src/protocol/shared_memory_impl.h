//===- protocol/shared_memory_impl.h - Shared memory internals (private) ---===//
//
// What the region registry (shared_memory.cc), the tensors in regions
// (shared_memory_tensors.cc) and the HTTP bodies (shared_memory_http.cc) of
// protocol/shared_memory.h share. Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace rs::protocol::shm_detail {

/// `s` as a JSON string literal (invalid UTF-8 replaced), for names and keys in messages.
std::string jsonQuoted(std::string_view s);

} // namespace rs::protocol::shm_detail
