//===- fuzz/fuzz_util.h - Shared setup of the libFuzzer targets -------------===//
//
// What several targets need: a registered system shared memory region "r" (4096 bytes of
// a POSIX object created for the process and unlinked at exit) so that shared-memory
// parameters reach the bounds checks, and the manifests of two fixture models to validate
// decoded requests against.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "protocol/shared_memory.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace rs::fuzz {

inline std::string shmKey() { return "/rs_fuzz_" + std::to_string(::getpid()); }

/// The registry with region "r" (offset 0, 4096 bytes) and region "tail" (the last 64
/// bytes of the same object).
inline protocol::SharedMemoryRegistry &registry() {
  static protocol::SharedMemoryRegistry *r = [] {
    auto *reg = new protocol::SharedMemoryRegistry();
    const std::string key = shmKey();
    int fd = ::shm_open(key.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ::ftruncate(fd, 4096) != 0)
      std::abort();
    ::close(fd);
    std::atexit([] { ::shm_unlink(shmKey().c_str()); });
    if (!reg->registerRegion({"r", key, 0, 4096}).isOk() ||
        !reg->registerRegion({"tail", key, 4032, 64}).isOk())
      std::abort();
    return reg;
  }();
  return *r;
}

/// Manifests of fixture models (iris_mlp: one FP32 input with a batch axis; tiny_bert:
/// integer inputs).
inline const std::vector<bundle::Manifest> &manifests() {
  static std::vector<bundle::Manifest> *m = [] {
    auto *out = new std::vector<bundle::Manifest>();
    for (const char *model : {"iris_mlp", "tiny_bert"}) {
      Result<bundle::Manifest> r = bundle::loadManifest(
          std::string(RS_SHARED_DIR) + "/fixtures/bundles/" + model + "/manifest.yaml", model);
      if (!r.isOk())
        std::abort();
      out->push_back(std::move(r).value());
    }
    return out;
  }();
  return *m;
}

} // namespace rs::fuzz
