//===- fuzz/safetensors_fuzz.cc - safetensors reader ------------------------===//
//
// The input is the file: it is written to an anonymous memory file (memfd) and opened by
// its /proc/self/fd path, so the reader maps it exactly as it maps a bundle's weights.
// Every tensor is read in full (a view past the mapping would fault under ASan).
//
//===----------------------------------------------------------------------===//
#include "bundle/safetensors.h"

#include <cstdint>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = ::memfd_create("fuzz.safetensors", MFD_CLOEXEC);
  if (fd < 0)
    std::abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0)
      std::abort();
    done += static_cast<size_t>(n);
  }
  {
    rs::Result<rs::bundle::SafetensorsFile> f =
        rs::bundle::SafetensorsFile::open("/proc/self/fd/" + std::to_string(fd));
    if (f.isOk()) {
      uint64_t sum = 0;
      for (const std::string &name : f->names()) {
        rs::Result<rs::Tensor> t = f->tensor(name);
        if (!t.isOk())
          continue;
        for (uint8_t b : t->bytes())
          sum += b;
      }
      for (const auto &[k, v] : f->metadata())
        sum += k.size() + v.size();
      if (sum == 0xFFFFFFFFFFFFFFFFull)
        std::abort(); // keeps the reads from being optimised away
    }
  }
  ::close(fd);
  return 0;
}
