//===- protocol/shared_memory_http.cc - Shared memory HTTP bodies -----------===//
//
// The HTTP/REST bodies of the system shared memory extension (protocol/shared_memory.h):
// the register request parsed, the status reply written; and the errors of the CUDA
// extension's routes and RPCs.
//
//===----------------------------------------------------------------------===//
#include "protocol/shared_memory.h"

#include "protocol/shared_memory_impl.h"

#include <nlohmann/json.hpp>

namespace rs::protocol {
namespace {

using nlohmann::json;

Result<uint64_t> unsignedField(const json &root, const char *key, bool required) {
  auto it = root.find(key);
  if (it == root.end()) {
    if (required)
      return invalidArgument() << "shared memory register body has no '" << key << "'";
    return uint64_t{0};
  }
  if (it->is_number_unsigned())
    return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() >= 0)
    return static_cast<uint64_t>(it->get<int64_t>());
  return invalidArgument() << "shared memory register body: '" << key
                           << "' must be a non-negative integer, got "
                           << it->dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

Result<SharedMemoryRegionInfo> parseSharedMemoryRegisterJson(const std::string &name,
                                                             std::string_view body) {
  json root;
  try {
    root = json::parse(body.begin(), body.end());
  } catch (const json::exception &e) {
    return invalidArgument() << "shared memory register body: invalid JSON: " << e.what();
  }
  if (!root.is_object())
    return invalidArgument() << "shared memory register body must be a JSON object";
  SharedMemoryRegionInfo info;
  info.name = name;
  auto key = root.find("key");
  if (key == root.end() || !key->is_string())
    return invalidArgument() << "shared memory register body: 'key' must be a string";
  info.key = key->get<std::string>();
  RS_ASSIGN_OR_RETURN(info.offset, unsignedField(root, "offset", false));
  RS_ASSIGN_OR_RETURN(info.byte_size, unsignedField(root, "byte_size", true));
  return info;
}

std::string sharedMemoryStatusJson(const std::vector<SharedMemoryRegionInfo> &regions) {
  json arr = json::array();
  for (const SharedMemoryRegionInfo &r : regions)
    arr.push_back(
        {{"name", r.name}, {"key", r.key}, {"offset", r.offset}, {"byte_size", r.byte_size}});
  return arr.dump(-1, ' ', false, json::error_handler_t::replace);
}

Status cudaSharedMemoryNotRegistered(const std::string &name) {
  return notFound() << "cuda shared memory region " << shm_detail::jsonQuoted(name)
                    << " is not registered";
}

Status cudaSharedMemoryRefused(const std::string &name) {
  return invalidArgument() << "cuda shared memory region " << shm_detail::jsonQuoted(name)
                           << ": CUDA shared memory is not offered (system shared memory is)";
}

} // namespace rs::protocol
