//===- gateway/metrics_merge.cc - One exposition from the gateway and workers ===//
#include "gateway/metrics_merge.h"

#include <map>

namespace rs::gateway {
namespace {

struct Family {
  std::string help_line; // "# HELP name ..." or ""
  std::string type_line; // "# TYPE name ..." or ""
  std::vector<std::string> samples;
};

/// Families in first-seen order.
class Merged {
public:
  Family &get(const std::string &name) {
    auto [it, inserted] = index_.emplace(name, families_.size());
    if (inserted)
      families_.emplace_back(name, Family{});
    return families_[it->second].second;
  }
  std::string render() const {
    std::string out;
    for (const auto &[name, f] : families_) {
      if (!f.help_line.empty())
        out += f.help_line + "\n";
      if (!f.type_line.empty())
        out += f.type_line + "\n";
      for (const std::string &s : f.samples)
        out += s + "\n";
    }
    return out;
  }

private:
  std::map<std::string, size_t> index_;
  std::vector<std::pair<std::string, Family>> families_;
};

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':';
}

/// The metric name at the start of a sample line ("" if there is none).
std::string_view sampleName(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && isNameChar(line[i]))
    ++i;
  return line.substr(0, i);
}

bool belongsTo(std::string_view sample, std::string_view family) {
  if (sample == family)
    return true;
  if (!sample.starts_with(family))
    return false;
  std::string_view suffix = sample.substr(family.size());
  return suffix == "_bucket" || suffix == "_sum" || suffix == "_count" || suffix == "_created";
}

/// The position of the `worker` label name in the label set `{...}` at the start of
/// `labels` (outside quoted values), or npos.
size_t workerLabelAt(std::string_view labels) {
  bool quoted = false;
  for (size_t i = 0; i < labels.size(); ++i) {
    char c = labels[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == '}') {
      return std::string_view::npos;
    } else if (c == '{' || c == ',') {
      size_t j = i + 1;
      while (j < labels.size() && labels[j] == ' ')
        ++j;
      if (labels.substr(j).starts_with("worker") && j + 6 < labels.size() &&
          (labels[j + 6] == '=' || labels[j + 6] == ' '))
        return j;
    }
  }
  return std::string_view::npos;
}

std::string escapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

/// `line` with worker="<name>" as its first label. A `worker` label of its own with the
/// same value is kept as it is; with another value it is renamed `exported_worker` (as
/// Prometheus does with a conflicting target label).
std::string withWorker(std::string_view line, std::string_view name_part,
                       const std::string &worker) {
  std::string_view rest = line.substr(name_part.size());
  const std::string escaped = escapeLabel(worker);
  const std::string label = "worker=\"" + escaped + "\"";
  if (!rest.empty() && rest.front() == '{') {
    const size_t at = workerLabelAt(rest);
    if (at != std::string_view::npos) {
      if (rest.substr(at).starts_with(label))
        return std::string(line);
      return std::string(name_part) + "{" + label + "," + std::string(rest.substr(1, at - 1)) +
             "exported_" + std::string(rest.substr(at));
    }
    const bool empty = rest.size() > 1 && rest[1] == '}';
    return std::string(name_part) + "{" + label + (empty ? "" : ",") + std::string(rest.substr(1));
  }
  return std::string(name_part) + "{" + label + "}" + std::string(rest);
}

void addExposition(Merged &merged, std::string_view text, const std::string *worker) {
  std::string current; // family of the closest preceding TYPE line
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, end == std::string_view::npos ? text.size() - pos : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.remove_suffix(1);
    if (line.empty())
      continue;
    if (line.front() == '#') {
      // "# HELP name text" / "# TYPE name type"; other comments are dropped.
      const bool help = line.starts_with("# HELP ");
      const bool type = line.starts_with("# TYPE ");
      if (!help && !type)
        continue;
      std::string_view after = line.substr(7);
      std::string name(sampleName(after));
      if (name.empty())
        continue;
      Family &f = merged.get(name);
      if (help && f.help_line.empty())
        f.help_line = std::string(line);
      if (type) {
        if (f.type_line.empty())
          f.type_line = std::string(line);
        current = name;
      }
      continue;
    }
    std::string_view name = sampleName(line);
    if (name.empty())
      continue;
    const std::string family =
        !current.empty() && belongsTo(name, current) ? current : std::string(name);
    merged.get(family).samples.push_back(worker ? withWorker(line, name, *worker)
                                                : std::string(line));
  }
}

} // namespace

std::string mergeExpositions(std::string_view own,
                             const std::vector<std::pair<std::string, std::string>> &workers) {
  Merged merged;
  addExposition(merged, own, nullptr);
  for (const auto &[name, text] : workers)
    addExposition(merged, text, &name);
  return merged.render();
}

} // namespace rs::gateway
