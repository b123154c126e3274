//===- tools/validate_requests.cc - The request set of validate -----------===//
//
// Request sources (`[MODEL=]PATH`) and the set they plan (files of a directory in name
// order, each request named `<model>/<file name>`), reading one request (a golden file's
// inputs named by the deployment's evidence), and the SHA-256 of the outputs of a reply.
//
//===----------------------------------------------------------------------===//
#include "tools/validate_command.h"

#include "bundle/safetensors.h"
#include "client/infer_io.h"
#include "support/digest.h"
#include "tools/validate_impl.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace rs::tools {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool endsWith(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

namespace detail {

std::string sha256OfTensor(const Tensor &t) {
  return sha256Hex(std::string_view(reinterpret_cast<const char *>(t.data()),
                                    static_cast<size_t>(t.byteSize())));
}

Result<std::vector<PlannedRequest>> planRequests(const std::vector<RequestSource> &sources) {
  std::vector<PlannedRequest> out;
  std::set<std::string> names;
  for (const RequestSource &src : sources) {
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(src.path, ec)) {
      for (const fs::directory_entry &e : fs::directory_iterator(src.path, ec)) {
        const std::string f = e.path().filename().string();
        if (!f.empty() && f[0] != '.' && e.is_regular_file(ec) &&
            (endsWith(f, ".safetensors") || (!src.golden && endsWith(f, ".json"))))
          files.push_back(e.path().string());
      }
      if (ec)
        return notFound() << src.path << ": cannot list the directory: " << ec.message();
      std::sort(files.begin(), files.end());
      if (files.empty())
        return notFound() << src.path << ": no request files (.safetensors"
                          << (src.golden ? "" : " or .json") << ") in the directory";
    } else if (fs::is_regular_file(src.path, ec)) {
      files.push_back(src.path);
    } else {
      return notFound() << src.path << ": no such request file or directory";
    }
    for (const std::string &f : files) {
      PlannedRequest r;
      r.model = src.model;
      r.file = fs::absolute(f).lexically_normal().string();
      r.name = src.model + "/" + fs::path(f).filename().string();
      if (src.golden) {
        if (!endsWith(f, ".safetensors"))
          return invalidArgument() << f << ": a golden file must be .safetensors";
        r.kind = "golden";
      } else if (endsWith(f, ".safetensors")) {
        r.kind = "safetensors";
      } else if (endsWith(f, ".json")) {
        r.kind = "json";
      } else {
        return invalidArgument() << f << ": expected a .safetensors or .json request file";
      }
      if (!names.insert(r.name).second)
        return invalidArgument() << "request set has two requests named '" << r.name
                                 << "'; give the files distinct names";
      out.push_back(std::move(r));
    }
  }
  if (out.empty())
    return invalidArgument() << "the request set is empty (give --requests or --golden)";
  return out;
}

/// The input names of `model` from a worker document (models.<model>.inputs).
Result<std::vector<std::string>> modelInputs(const json &identity, const std::string &model) {
  const json *doc = &identity;
  if (identity.contains("workers") && identity["workers"].is_array() &&
      !identity["workers"].empty())
    doc = &identity["workers"][0]["evidence"]; // behind a gateway: any worker's view
  auto models = doc->find("models");
  if (models == doc->end() || !models->contains(model))
    return notFound() << "model '" << model << "' is not in the deployment's evidence";
  const json &m = (*models)[model];
  if (str(m, "state") != "ready")
    return failedPrecondition() << "model '" << model << "' is not ready: " << str(m, "reason");
  std::vector<std::string> names;
  for (const json &spec : m.value("inputs", json::array()))
    names.push_back(str(spec, "name"));
  return names;
}

Result<protocol::InferRequest> loadRequest(const PlannedRequest &r, const json &identity) {
  if (r.kind != "golden")
    return client::loadInferRequest(r.file, r.model);
  RS_ASSIGN_OR_RETURN(std::vector<std::string> inputs, modelInputs(identity, r.model));
  RS_ASSIGN_OR_RETURN(bundle::SafetensorsFile file, bundle::SafetensorsFile::open(r.file));
  protocol::InferRequest request;
  request.model_name = r.model;
  for (const std::string &name : inputs) {
    if (!file.contains(name))
      return invalidArgument() << r.file << ": golden file has no tensor '" << name
                               << "' (an input of model '" << r.model << "')";
    RS_ASSIGN_OR_RETURN(Tensor t, file.tensor(name));
    request.inputs.push_back({name, std::move(t)});
  }
  return request;
}

json outputsJson(const protocol::InferResponse &response) {
  json out = json::array();
  for (const protocol::NamedTensor &o : response.outputs)
    out.push_back({{"name", o.name},
                   {"datatype", dtypeWireName(o.tensor.dtype())},
                   {"shape", o.tensor.shape()},
                   {"sha256", sha256OfTensor(o.tensor)}});
  return out;
}

} // namespace detail

using namespace detail;

Result<RequestSource> parseRequestSource(const std::string &spec, const std::string &default_model,
                                         bool golden) {
  RequestSource src;
  src.golden = golden;
  src.path = spec;
  src.model = default_model;
  if (size_t eq = spec.find('=');
      eq != std::string::npos && eq > 0 && spec.substr(0, eq).find('/') == std::string::npos) {
    src.model = spec.substr(0, eq);
    src.path = spec.substr(eq + 1);
  }
  if (src.model.empty())
    return invalidArgument() << "request source '" << spec
                             << "' names no model: write MODEL=PATH or give --model";
  if (src.path.empty())
    return invalidArgument() << "request source '" << spec << "' has no path";
  return src;
}

} // namespace rs::tools
