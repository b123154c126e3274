//===- tools/validate_check.cc - `reactant-server validate check` ---------===//
//
// Re-sends a validation record's requests and compares outputs and identity; the
// contract is in validate_command.h.
//
//===----------------------------------------------------------------------===//
#include "bundle/safetensors.h"
#include "support/digest.h"
#include "support/file.h"
#include "tools/validate_command.h"
#include "tools/validate_impl.h"

#include <filesystem>
#include <map>
#include <optional>

namespace rs::tools {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace detail;

/// How one recorded output compares.
struct OutputCheck {
  std::string name;
  std::string problem; // "" when identical
  std::optional<TensorDifference> difference;
};

/// How one recorded request compares.
struct RequestCheck {
  std::string name;
  /// "identical", "differs" (an output differs or the request now fails) or "not checked"
  /// (its file is missing or changed: the record cannot be replayed).
  std::string status;
  std::string message;
  std::vector<OutputCheck> outputs; // the outputs that differ
};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

std::string shapeText(const json &shape) { return shape.dump(); }

/// "1 fact" / "3 facts".
std::string count(size_t n, const std::string &noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

Result<json> readRecord(const std::string &path) {
  RS_ASSIGN_OR_RETURN(std::string text, readWholeFile(path));
  RS_ASSIGN_OR_RETURN(json rec, parseObject(text, path));
  if (str(rec, "format") != kRecordFormat)
    return invalidArgument() << path << ": format '" << str(rec, "format") << "' is not '"
                             << kRecordFormat << "'";
  if (!rec.contains("identity") || !rec["identity"].is_object() || !rec.contains("requests") ||
      !rec["requests"].is_array() || !rec.contains("server") || !rec["server"].is_object())
    return invalidArgument() << path << ": a record needs identity, server and requests";
  if (rec["requests"].empty())
    return invalidArgument() << path
                             << ": the record holds no requests; a check of nothing proves nothing";
  return rec;
}

/// The recorded tensors kept for `entry` when present and matching the recorded hashes.
std::optional<bundle::SafetensorsFile> keptOutputs(const json &entry, const fs::path &record_dir,
                                                   std::string *note) {
  const std::string kept = str(entry, "outputs_file");
  if (kept.empty()) {
    *note = "the record kept no outputs (record with --outputs-dir to see the size of a "
            "difference)";
    return std::nullopt;
  }
  const fs::path path = fs::path(kept).is_absolute() ? fs::path(kept) : record_dir / kept;
  Result<bundle::SafetensorsFile> file = bundle::SafetensorsFile::open(path.string());
  if (!file.isOk()) {
    *note = "kept outputs unreadable: " + file.status().message();
    return std::nullopt;
  }
  return std::move(file).value();
}

/// Compares the reply with the recorded outputs of `entry`.
void compareOutputs(const json &entry, const protocol::InferResponse &reply,
                    const fs::path &record_dir, RequestCheck &check) {
  std::map<std::string, const Tensor *> now;
  for (const protocol::NamedTensor &o : reply.outputs)
    now[o.name] = &o.tensor;
  std::optional<bundle::SafetensorsFile> kept;
  std::string kept_note;
  bool kept_loaded = false;
  std::map<std::string, bool> seen;
  for (const json &out : entry.value("outputs", json::array())) {
    const std::string name = str(out, "name");
    seen[name] = true;
    OutputCheck oc;
    oc.name = name;
    auto it = now.find(name);
    const std::string recorded_type = str(out, "datatype");
    const std::string recorded_shape = shapeText(out.value("shape", json::array()));
    if (it == now.end()) {
      oc.problem = "missing from the reply";
    } else {
      const Tensor &t = *it->second;
      const std::string type(dtypeWireName(t.dtype()));
      const std::string shape = json(t.shape()).dump();
      if (type != recorded_type) {
        oc.problem = "datatype " + recorded_type + " -> " + type;
      } else if (shape != recorded_shape) {
        oc.problem = "shape " + recorded_shape + " -> " + shape;
      } else if (sha256OfTensor(t) != str(out, "sha256")) {
        oc.problem = "bytes differ (sha256 " + str(out, "sha256").substr(0, 16) + "... -> " +
                     sha256OfTensor(t).substr(0, 16) + "...)";
        if (!kept_loaded) {
          kept = keptOutputs(entry, record_dir, &kept_note);
          kept_loaded = true;
        }
        if (!kept) {
          oc.problem += "; " + kept_note;
        } else if (Result<Tensor> before = kept->tensor(name);
                   !before.isOk() || sha256OfTensor(*before) != str(out, "sha256")) {
          oc.problem += "; the kept outputs do not hold the recorded '" + name + "'";
        } else {
          oc.difference = tensorDifference(*before, t);
          oc.problem += "; " + std::to_string(oc.difference->elements_differing) + " of " +
                        std::to_string(t.numElements()) + " elements differ, max abs diff " +
                        number(oc.difference->max_abs_diff) + ", max rel diff " +
                        number(oc.difference->max_rel_diff);
        }
      }
    }
    if (!oc.problem.empty())
      check.outputs.push_back(std::move(oc));
  }
  for (const protocol::NamedTensor &o : reply.outputs)
    if (!seen.count(o.name))
      check.outputs.push_back({o.name, "in the reply but not in the record", std::nullopt});
  check.status = check.outputs.empty() ? "identical" : "differs";
}

RequestCheck checkRequest(const json &entry, client::KServeClient &client, const json &identity,
                          const fs::path &record_dir) {
  RequestCheck check;
  check.name = str(entry, "name");
  PlannedRequest p{check.name, str(entry, "model"), str(entry, "file"), str(entry, "kind")};
  Result<std::string> sha = sha256OfFile(p.file);
  if (!sha.isOk()) {
    check.status = "not checked";
    check.message = "request file missing: " + sha.status().message();
    return check;
  }
  if (*sha != str(entry, "file_sha256")) {
    check.status = "not checked";
    check.message = "request file " + p.file + " changed since the record (sha256 " +
                    str(entry, "file_sha256").substr(0, 16) + "... -> " + sha->substr(0, 16) +
                    "...)";
    return check;
  }
  Result<protocol::InferRequest> request = loadRequest(p, identity);
  if (!request.isOk()) {
    // The file is the recorded one: what changed is the deployment (e.g. a golden file's
    // model is gone).
    check.status = "differs";
    check.message = "cannot build the request now: " + request.status().message();
    return check;
  }
  Result<protocol::InferResponse> reply = client.infer(*request);
  if (!reply.isOk()) {
    check.status = "differs";
    check.message = "request failed: " + reply.status().toString();
    return check;
  }
  compareOutputs(entry, *reply, record_dir, check);
  return check;
}

json reportJson(const std::string &verdict, int status, const std::string &server,
                const std::vector<IdentityChange> &changes,
                const std::vector<RequestCheck> &requests) {
  json ch = json::array();
  for (const IdentityChange &c : changes)
    ch.push_back({{"worker", c.worker},
                  {"path", c.change.path},
                  {"category", c.change.category},
                  {"recorded", c.change.recorded},
                  {"current", c.change.current}});
  json rq = json::array();
  for (const RequestCheck &r : requests) {
    json outs = json::array();
    for (const OutputCheck &o : r.outputs) {
      json j = {{"name", o.name}, {"problem", o.problem}};
      if (o.difference) {
        j["elements_differing"] = o.difference->elements_differing;
        j["max_abs_diff"] = o.difference->max_abs_diff; // inf is written as null
        j["max_rel_diff"] = o.difference->max_rel_diff;
      }
      outs.push_back(std::move(j));
    }
    rq.push_back(
        {{"name", r.name}, {"status", r.status}, {"message", r.message}, {"outputs", outs}});
  }
  return {{"verdict", verdict},
          {"exit_status", status},
          {"checked_at", protocol::utcNow()},
          {"server", server},
          {"identity_changes", std::move(ch)},
          {"requests", std::move(rq)}};
}

} // namespace

int runValidateCheck(const ValidateCheckOptions &o, std::ostream &out, std::ostream &err) {
  Result<json> rec = readRecord(o.record_path);
  if (!rec.isOk()) {
    err << "validate check: " << rec.status().toString() << "\n";
    return kExitError;
  }
  const json &server_json = (*rec)["server"];
  client::KServeClientOptions co;
  Result<client::WireProtocol> protocol =
      parseProtocol(o.protocol.empty() ? str(server_json, "protocol") : o.protocol);
  if (!protocol.isOk()) {
    err << "validate check: " << protocol.status().message() << "\n";
    return kExitError;
  }
  co.protocol = *protocol;
  co.url = o.url.empty() ? str(server_json, "url") : o.url;
  co.timeout_ms = o.timeout_ms;
  const std::string where = serverText(co);
  const json &requests = (*rec)["requests"];
  out << "record:   " << o.record_path << " (recorded " << str(*rec, "recorded_at") << " against "
      << str(server_json, "url") << ", " << requests.size() << " requests)\n"
      << "server:   " << where << "\n";

  Result<std::unique_ptr<client::KServeClient>> client = makeClient(co);
  Result<json> identity = client.isOk() ? fetchEvidence(co) : Result<json>(client.status());
  if (!identity.isOk()) {
    err << "validate check: " << identity.status().toString() << "\n";
    out << "verdict:  ERROR (cannot read the deployment's evidence)\n";
    return kExitError;
  }
  const std::vector<IdentityChange> changes = compareIdentity((*rec)["identity"], *identity);
  out << "identity: "
      << (changes.empty() ? "no fact changed" : count(changes.size(), "fact") + " changed") << "\n";
  for (const IdentityChange &c : changes)
    out << changeLine(c) << "\n";

  const fs::path record_dir = fs::absolute(o.record_path).parent_path();
  std::vector<RequestCheck> checks;
  size_t identical = 0, differ = 0, unchecked = 0;
  for (const json &entry : requests) {
    checks.push_back(checkRequest(entry, **client, *identity, record_dir));
    const RequestCheck &c = checks.back();
    (c.status == "identical" ? identical : c.status == "differs" ? differ : unchecked)++;
  }
  out << "requests: " << requests.size() << " in the record: " << identical << " identical, "
      << differ << " differ, " << unchecked << " not checked\n";
  for (const RequestCheck &c : checks) {
    if (c.status == "identical")
      continue;
    out << "  " << (c.status == "differs" ? "DIFFERS " : "NOT CHECKED ") << c.name
        << (c.message.empty() ? "" : ": " + c.message) << "\n";
    for (const OutputCheck &oc : c.outputs)
      out << "    " << oc.name << ": " << oc.problem << "\n";
  }

  std::string verdict;
  int status;
  if (differ > 0 || !changes.empty()) {
    status = kExitCheckFailed;
    verdict = "MISMATCH (" + std::to_string(differ) + " of " + count(requests.size(), "request") +
              " differ; " + count(changes.size(), "identity fact") + " changed";
    verdict += unchecked ? "; " + count(unchecked, "request") + " not checked)" : ")";
  } else if (unchecked > 0) {
    status = kExitError;
    verdict = "ERROR (" + count(unchecked, "request") +
              " could not be replayed; every other output is identical)";
  } else {
    status = kExitOk;
    verdict = "MATCH (" + count(identical, "request") +
              ", every output byte-identical; identity unchanged)";
  }
  out << "verdict:  " << verdict << "\n";
  if (!o.report_path.empty()) {
    const json report = reportJson(verdict, status, where, changes, checks);
    if (Status s = writeFileAtomically(o.report_path, dumpJson(report, 2) + "\n"); !s.isOk()) {
      err << "validate check: " << s.toString() << "\n";
      return kExitError;
    }
  }
  return status;
}

} // namespace rs::tools
