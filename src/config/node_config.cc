//===- config/node_config.cc - Node file and per-worker resolution ---------===//
#include "config/node_config.h"
#include "support/file.h"
#include "support/text.h"

#include "config/image_identity.h"
#include "config/key_reader.h"
#include "config/keys.h"
#include "config/worker_build_impl.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <iterator>
#include <set>

extern char **environ;

namespace rs::config {

Environment processEnvironment() {
  Environment env;
  for (char **e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos)
      continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::string_view roleName(Role role) {
  switch (role) {
  case Role::kAll: return "all";
  case Role::kWorkers: return "workers";
  case Role::kGateway: return "gateway";
  }
  return "all";
}

namespace {

constexpr std::string_view kWorkerReserved[] = {"gpu", "host", "name", "port"};

Result<int64_t> portValue(const std::string &file, const yaml::Value &v) {
  RS_ASSIGN_OR_RETURN(int64_t port, yaml::integerOf(v, file));
  if (port < 1 || port > 65535)
    return Status(yaml::errorAt(v, file) << port << " is out of range [1, 65535]");
  return port;
}

/// A scalar `text` that the node file's value `from` implies (nullptr: none), with `origin`
/// and `from`'s line.
yaml::Value implied(std::string text, std::string origin, const yaml::Value *from) {
  return yaml::Value::scalarValue(std::move(text), std::move(origin),
                                  from ? from->mark : yaml::Mark{});
}

/// Key `key` of entry `index` of the node file's workers list, or nullptr.
const yaml::Value *workerKey(const NodeConfig &node, int64_t index, std::string_view key) {
  const yaml::Value *workers = node.tree.find("workers");
  if (!workers || !workers->isList() || index < 0 ||
      static_cast<size_t>(index) >= workers->list.size())
    return nullptr;
  return workers->list[static_cast<size_t>(index)].find(key);
}

/// "worker<i>" -> i, for nodes without a workers list.
std::optional<int64_t> synthesizedIndex(std::string_view name) {
  if (!name.starts_with("worker") || name.size() == 6)
    return std::nullopt;
  int64_t i = 0;
  std::string_view digits = name.substr(6);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || i < 0 ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  return i;
}

Status parseGpus(const std::string &file, const yaml::Value &v, GpuSelection &out) {
  if (v.isNull())
    return Status::ok();
  if (v.isScalar()) {
    if (lower(v.scalar) == "auto")
      return Status::ok();
    RS_ASSIGN_OR_RETURN(int64_t count, yaml::integerOf(v, file));
    if (count < 0)
      return yaml::errorAt(v, file) << "count " << count << " must be >= 0";
    out.kind = GpuSelection::Kind::kCount;
    out.count = count;
    return Status::ok();
  }
  if (!v.isList())
    return yaml::errorAt(v, file) << "expected auto, a count or a list of devices, got "
                                  << v.kindName();
  if (v.list.empty())
    return yaml::errorAt(v, file) << "the device list must not be empty";
  out.kind = GpuSelection::Kind::kList;
  for (const yaml::Value &d : v.list) {
    RS_ASSIGN_OR_RETURN(std::string device, yaml::scalarOf(d, file));
    if (device.empty())
      return yaml::errorAt(d, file) << "device must not be empty";
    out.devices.push_back(device);
  }
  return Status::ok();
}

Status parseWorkers(const std::string &file, const yaml::Value &v, NodeConfig &node) {
  if (!v.isList())
    return yaml::errorAt(v, file) << "expected a list of workers, got " << v.kindName();
  if (v.list.empty())
    return yaml::errorAt(v, file) << "must list at least one worker";
  std::set<std::string> names;
  for (const yaml::Value &entry : v.list) {
    if (!entry.isMap())
      return yaml::errorAt(entry, file)
             << "expected a map {name, gpu, host, port, ...}, got " << entry.kindName();
    NodeWorker w;
    const yaml::Value *name = entry.find("name");
    if (!name)
      return yaml::errorAt(entry, file) << "missing required key 'name'";
    RS_ASSIGN_OR_RETURN(w.name, yaml::scalarOf(*name, file));
    if (w.name.empty())
      return yaml::errorAt(*name, file) << "must not be empty";
    if (!names.insert(w.name).second)
      return yaml::errorAt(*name, file) << "duplicate worker name '" << w.name << "'";
    if (const yaml::Value *gpu = entry.find("gpu"); gpu && !gpu->isNull()) {
      RS_ASSIGN_OR_RETURN(int64_t g, yaml::integerOf(*gpu, file));
      if (g < 0)
        return yaml::errorAt(*gpu, file) << g << " must be >= 0";
      w.gpu = g;
    }
    if (const yaml::Value *host = entry.find("host"); host && !host->isNull()) {
      RS_ASSIGN_OR_RETURN(w.host, yaml::scalarOf(*host, file));
    }
    if (const yaml::Value *port = entry.find("port"); port && !port->isNull()) {
      RS_ASSIGN_OR_RETURN(w.port, portValue(file, *port));
    }
    w.overrides = yaml::Value::mapValue(entry.origin, entry.mark);
    for (const auto &[key, value] : entry.map)
      if (std::find(std::begin(kWorkerReserved), std::end(kWorkerReserved), key) ==
          std::end(kWorkerReserved))
        w.overrides.map.emplace(key, value);
    RS_RETURN_IF_ERROR(detail::checkBlockKeys(w.overrides, file));
    node.workers.push_back(std::move(w));
  }
  return Status::ok();
}

Status parseModels(const std::string &file, const yaml::Value &v, NodeConfig &node) {
  if (v.isNull())
    return Status::ok();
  if (!v.isMap())
    return yaml::errorAt(v, file) << "expected a map of model name to worker names, got "
                                  << v.kindName();
  for (const auto &[model, targets] : v.map) {
    if (!targets.isList())
      return yaml::errorAt(targets, file)
             << "expected a list of worker names, got " << targets.kindName();
    if (targets.list.empty())
      return yaml::errorAt(targets, file) << "assigns the model to no workers";
    std::vector<std::string> names;
    for (const yaml::Value &t : targets.list) {
      RS_ASSIGN_OR_RETURN(std::string worker, yaml::scalarOf(t, file));
      Result<int64_t> index = findWorker(node, worker);
      if (!index.isOk())
        return yaml::errorAt(t, file) << index.status().message();
      names.push_back(worker);
    }
    node.models[model] = std::move(names);
  }
  return Status::ok();
}

/// gRPC and metrics ports must not collide between the listed workers; a message points at
/// the worker's entry (or the file when the workers are not listed).
Status checkPortCollisions(const NodeConfig &node, const std::vector<WorkerConfig> &workers) {
  std::map<int64_t, std::string> used; // port -> "worker 'a'" / "worker 'a' (metrics)"
  for (size_t i = 0; i < workers.size(); ++i) {
    const WorkerConfig &w = workers[i];
    const yaml::Value *name = workerKey(node, static_cast<int64_t>(i), "name");
    const std::string where = name ? yaml::location(*name, node.path) : node.path;
    const std::string grpc_user = "worker '" + w.worker_name + "'";
    if (auto it = used.find(w.endpoints.port); it != used.end())
      return invalidArgument() << where << ": " << grpc_user << " port " << w.endpoints.port
                               << " collides with " << it->second;
    used[w.endpoints.port] = grpc_user;
    if (w.endpoints.metrics_port == 0)
      continue;
    if (auto it = used.find(w.endpoints.metrics_port); it != used.end())
      return invalidArgument() << where << ": " << grpc_user << " metrics port "
                               << w.endpoints.metrics_port << " collides with " << it->second;
    used[w.endpoints.metrics_port] = grpc_user + " (metrics)";
  }
  return Status::ok();
}

} // namespace

Environment withoutWorkerPortVariables(Environment env) {
  env.erase("INFERENCE_SERVER_ENDPOINTS_PORT");
  env.erase("INFERENCE_SERVER_ENDPOINTS_METRICS_PORT");
  return env;
}

size_t listedWorkerCount(const NodeConfig &node) { return node.workers.size(); }

Result<int64_t> findWorker(const NodeConfig &node, std::string_view name) {
  if (node.workers.empty()) {
    if (std::optional<int64_t> i = synthesizedIndex(name))
      return *i;
    return notFound() << "worker '" << name
                      << "' is not defined (the node file has no workers list: worker0, "
                         "worker1, ...)";
  }
  std::string known;
  for (size_t i = 0; i < node.workers.size(); ++i) {
    if (node.workers[i].name == name)
      return static_cast<int64_t>(i);
    known += (i ? ", " : "") + node.workers[i].name;
  }
  return notFound() << "worker '" << name << "' is not defined (have: " << known << ")";
}

Result<NodeConfig> parseNodeFile(std::string_view text, const std::string &path,
                                 const Environment &env) {
  RS_ASSIGN_OR_RETURN(yaml::Value root, yaml::parse(text, path));
  if (!root.isMap())
    return yaml::errorAt(root, path) << yaml::wrongKind("a map at the top level", root);
  RS_RETURN_IF_ERROR(checkKeys(nodeKeys(), KeyReader(root, path), root));

  NodeConfig node;
  node.path = path;
  node.env = env;

  const yaml::Value *repo = root.find("model_repo");
  if (!repo || repo->isNull())
    return yaml::errorAt(root, path) << "missing required key 'model_repo'";
  RS_ASSIGN_OR_RETURN(std::string repo_text, yaml::scalarOf(*repo, path));
  if (repo_text.empty())
    return yaml::errorAt(*repo, path) << "must not be empty";
  std::filesystem::path repo_path(repo_text);
  if (repo_path.is_relative())
    repo_path = std::filesystem::path(path).parent_path() / repo_path;
  node.model_repo = repo_path.lexically_normal().string();

  RS_RETURN_IF_ERROR(readKeys(nodeKeys(), KeyReader(root, path), node));
  if (const yaml::Value *v = root.find("gpus"))
    RS_RETURN_IF_ERROR(parseGpus(path, *v, node.gpus));

  node.global = yaml::Value::mapValue("global");
  if (const yaml::Value *g = root.find("global")) {
    RS_RETURN_IF_ERROR(detail::checkBlockKeys(*g, path));
    if (g->isMap())
      node.global = *g;
  }
  if (const yaml::Value *w = root.find("workers"); w && !w->isNull())
    RS_RETURN_IF_ERROR(parseWorkers(path, *w, node));
  if (const yaml::Value *m = root.find("models"))
    RS_RETURN_IF_ERROR(parseModels(path, *m, node));
  node.tree = std::move(root);

  // Resolve every listed worker now, so that any error in the file or the environment
  // surfaces at load; then check the ports the file gives them across workers.
  const int64_t count = node.workers.empty() ? 1 : static_cast<int64_t>(node.workers.size());
  for (int64_t i = 0; i < count; ++i)
    RS_RETURN_IF_ERROR(resolveWorker(node, i).status());
  NodeConfig file_ports = node;
  file_ports.env = withoutWorkerPortVariables(node.env);
  std::vector<WorkerConfig> resolved;
  for (int64_t i = 0; i < count; ++i) {
    RS_ASSIGN_OR_RETURN(WorkerConfig w, resolveWorker(file_ports, i));
    resolved.push_back(std::move(w));
  }
  RS_RETURN_IF_ERROR(checkPortCollisions(node, resolved));
  return node;
}

Result<NodeConfig> loadNodeFile(const std::string &path, const Environment &env) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  return parseNodeFile(text, path, env);
}

Result<WorkerConfig> resolveWorker(const NodeConfig &node, int64_t worker_index) {
  const bool listed = !node.workers.empty();
  if (worker_index < 0 || (listed && worker_index >= static_cast<int64_t>(node.workers.size())))
    return outOfRange() << node.path << ": worker index " << worker_index
                        << " is out of range: the node file lists " << node.workers.size()
                        << " workers";
  const NodeWorker *entry = listed ? &node.workers[static_cast<size_t>(worker_index)] : nullptr;

  WorkerConfig out;
  out.worker_index = worker_index;
  out.worker_name = entry ? entry->name : "worker" + std::to_string(worker_index);
  out.node_file = node.path;
  if (entry) {
    out.node_host = entry->host;
    out.gpu = entry->gpu;
  }

  yaml::Value raw = node.global;
  if (!raw.isMap())
    raw = yaml::Value::mapValue("global");
  if (entry)
    yaml::deepMerge(raw, entry->overrides);

  const yaml::Value *repo = node.tree.find("model_repo");
  yaml::Value dirs;
  dirs.kind = yaml::Value::Kind::kList;
  dirs.origin = "model_repo";
  dirs.list.push_back(implied(node.model_repo, "model_repo", repo));
  dirs.mark = dirs.list.back().mark;
  yaml::setPath(raw, "model_dirs", std::move(dirs));

  const std::string worker_origin = "workers[" + std::to_string(worker_index) + "]";
  if (entry && entry->port)
    yaml::setPath(raw, "endpoints.port",
                  implied(std::to_string(*entry->port), worker_origin + ".port",
                          workerKey(node, worker_index, "port")));
  else if (node.base_port)
    yaml::setPath(raw, "endpoints.port",
                  implied(std::to_string(*node.base_port + worker_index), "base_port",
                          node.tree.find("base_port")));
  if (node.metrics_base_port)
    yaml::setPath(raw, "endpoints.metrics_port",
                  implied(std::to_string(*node.metrics_base_port + worker_index),
                          "metrics_base_port", node.tree.find("metrics_base_port")));
  if (entry && entry->gpu)
    yaml::setPath(raw, "runtime.device_ordinal",
                  implied(std::to_string(*entry->gpu), worker_origin + ".gpu",
                          workerKey(node, worker_index, "gpu")));
  if (node.shared_host_weights) {
    const yaml::Value *set = yaml::findPath(raw, "runtime.shared_host_weights");
    if (!set || set->isNull())
      yaml::setPath(raw, "runtime.shared_host_weights",
                    implied(*node.shared_host_weights ? "true" : "false", "shared_host_weights",
                            node.tree.find("shared_host_weights")));
  }
  // models: {m: [workers]} pins m to device memory on those workers unless a residency
  // is already set (model names may contain '.', so walk the maps directly).
  const yaml::Value *models_key = node.tree.find("models");
  for (const auto &[model, targets] : node.models) {
    if (std::find(targets.begin(), targets.end(), out.worker_name) == targets.end())
      continue;
    const std::string origin = "models." + model;
    const yaml::Value *entry_key = models_key ? models_key->find(model) : nullptr;
    const yaml::Mark mark = entry_key ? entry_key->mark : yaml::Mark{};
    if (const yaml::Value *m = yaml::findPath(raw, "scheduler.models"); !m || !m->isMap())
      yaml::setPath(raw, "scheduler.models", yaml::Value::mapValue(origin, mark));
    yaml::Value &models = raw.map["scheduler"].map["models"];
    yaml::Value &block = models.map[model];
    if (!block.isMap())
      block = yaml::Value::mapValue(origin, mark);
    const yaml::Value *residency = block.find("residency");
    if (!residency || residency->isNull())
      block.map["residency"] = implied("device", origin, entry_key);
  }

  RS_RETURN_IF_ERROR(detail::applyEnvironment(node.env, raw, out));
  RS_RETURN_IF_ERROR(detail::buildWorker(raw, node.path, out));
  for (std::string_view var : {kImageIdentityFileVariable, kImageDigestVariable})
    if (auto it = node.env.find(std::string(var)); it != node.env.end())
      out.image_env.insert(*it);
  return out;
}

} // namespace rs::config
