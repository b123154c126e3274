//===- fuzz/make_seeds.cc - Seed corpora for the request decoders -----------===//
//
// `fuzz_make_seeds DIR` writes, for the models iris_mlp (FP32 [-1,4] -> FP32 [-1,3]) and
// tiny_bert (its fixture manifest), one request of every loadgen kind (valid and
// malformed, shared memory included, client/load_requests.h) as:
//   DIR/grpc_infer/<model>_<kind>.bin     serialized ModelInferRequest
//   DIR/http_infer/<model>_<kind>.json    JSON body (kinds without binary data)
//   DIR/binary_header/<model>_<kind>.bin  2-byte header length (0xffff: none) + body
// Shared-memory kinds name the fuzz targets' regions "r" and "tail" (fuzz_util.h).
//
//===----------------------------------------------------------------------===//
#include "bundle/manifest.h"
#include "client/load_requests.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using namespace rs::client::loadgen;

namespace {

Model fromManifest(const std::string &name) {
  rs::Result<rs::bundle::Manifest> m = rs::bundle::loadManifest(
      std::string(RS_SHARED_DIR) + "/fixtures/bundles/" + name + "/manifest.yaml", name);
  if (!m.isOk()) {
    std::fprintf(stderr, "%s\n", m.status().toString().c_str());
    std::exit(1);
  }
  Model model;
  model.name = name;
  for (const auto &s : m->executable_inputs)
    model.inputs.push_back({s.name, s.dtype, s.wireShape()});
  for (const auto &s : m->executable_outputs)
    model.outputs.push_back({s.name, s.dtype, s.wireShape()});
  return model;
}

void write(const fs::path &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  for (const char *t : {"grpc_infer", "http_infer", "binary_header"})
    fs::create_directories(dir / t);
  std::mt19937_64 rng(1);
  int written = 0;
  for (const char *name : {"iris_mlp", "tiny_bert"}) {
    Model model = fromManifest(name);
    rs::Result<Payload> payload = makePayload(model, 2, rng);
    if (!payload.isOk())
      return 1;
    ClientShm shm;
    shm.in_region = "r";
    shm.out_region = "tail";
    shm.in_size = 4096;
    shm.out_size = 64;
    uint64_t off = 0;
    for (const auto &in : payload->inputs) {
      shm.input_offsets.push_back(off);
      off += static_cast<uint64_t>(in.tensor.byteSize());
    }
    off = 0;
    for (int64_t b : payload->output_bytes) {
      shm.output_offsets.push_back(off);
      off += static_cast<uint64_t>(b);
    }
    for (const KindSpec &kind : allKinds(true, true, true)) {
      WireRequest req = buildRequest(kind, model, *payload, &shm, 7);
      const std::string stem = std::string(name) + "_" + kind.name;
      if (kind.proto == Proto::kGrpc) {
        write(dir / "grpc_infer" / (stem + ".bin"), req.grpc.SerializeAsString());
      } else {
        if (!req.http.header_length)
          write(dir / "http_infer" / (stem + ".json"), req.http.body);
        unsigned len = 0xffff;
        if (req.http.header_length)
          len = static_cast<unsigned>(
              std::min<unsigned long>(std::stoul(*req.http.header_length), 0xfffd));
        std::string prefix = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
        write(dir / "binary_header" / (stem + ".bin"), prefix + req.http.body);
      }
      ++written;
    }
  }
  std::printf("fuzz_make_seeds: %d requests written under %s\n", written, dir.c_str());
  return 0;
}
