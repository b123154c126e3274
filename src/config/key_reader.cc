//===- config/key_reader.cc - Reading a config tree through a key table ---===//
#include "config/key_reader.h"
#include "support/text.h"

#include "config/gateway_config.h"
#include "config/xla_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace rs::config {

// --- the range texts --------------------------------------------------------------------

std::string rangeText(IntRange r) {
  if (r.hi == std::numeric_limits<int64_t>::max())
    return ">= " + std::to_string(r.lo);
  return "[" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]";
}

std::string rangeText(const NumberRange &r) {
  if (std::isinf(r.hi))
    return std::string(r.lo_open ? "> " : ">= ") + yaml::numberText(r.lo);
  return std::string(r.lo_open ? "(" : "[") + yaml::numberText(r.lo) + ", " +
         yaml::numberText(r.hi) + (r.hi_open ? ")" : "]");
}

namespace {

bool contains(const NumberRange &r, double v) {
  return (r.lo_open ? v > r.lo : v >= r.lo) && (r.hi_open ? v < r.hi : v <= r.hi);
}

/// "must be >= 1" or "is out of range [0, 65535]".
std::string outOfRange(IntRange r) {
  return r.hi == std::numeric_limits<int64_t>::max() ? "must be " + rangeText(r)
                                                     : "is out of range " + rangeText(r);
}
std::string outOfRange(const NumberRange &r) {
  return std::isinf(r.hi) ? "must be " + rangeText(r) : "is out of range " + rangeText(r);
}

std::string listText(const std::vector<std::string> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + items[i];
  return out + "]";
}

std::string choiceNames(const KeySpec &spec) {
  std::string names;
  for (const Choice &c : spec.choices)
    names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

template <typename... F> struct Overload : F... { using F::operator()...; };
template <typename... F> Overload(F...) -> Overload<F...>;

} // namespace

// --- KeyReader --------------------------------------------------------------------------

KeyReader::KeyReader(const yaml::Value &root, std::string file, std::string label,
                     bool lenient_env_booleans)
    : root_(root), file_(std::move(file)), label_(std::move(label)),
      lenient_env_booleans_(lenient_env_booleans) {}

const yaml::Value *KeyReader::lookup(std::string_view path) const {
  const yaml::Value *v = findPath(root_, path);
  return v && !v->isNull() ? v : nullptr;
}

StatusBuilder KeyReader::error(const yaml::Value &v, std::string_view path) const {
  StatusBuilder b = invalidArgument();
  b << yaml::where(v, file_) << ": ";
  const std::string key = label_ + std::string(path);
  if (!v.outside && !std::string_view(v.origin).ends_with(key))
    b << key << " "; // a value implied by another key (a port from base_port), or the root
  return b;
}

KeyReader KeyReader::below(const yaml::Value &block, std::string label) const {
  return KeyReader(block, file_, std::move(label), lenient_env_booleans_);
}

Status KeyReader::setDefault(const KeySpec &spec, FieldRef f) const {
  if (spec.fallback.empty())
    return Status::ok();
  const yaml::Value v = yaml::Value::scalarValue(std::string(spec.fallback), "default");
  Status s = read(spec, v, f);
  if (!s.isOk()) // a table row whose default does not parse: a bug in the table
    return internalError() << "key '" << spec.path << "': default '" << spec.fallback
                           << "' does not parse: " << s.message();
  return s;
}

Status KeyReader::read(const KeySpec &spec, const yaml::Value &v, FieldRef f) const {
  const std::string_view path = spec.path;
  const bool list_like = spec.type == ValueType::kTextList || spec.type == ValueType::kXlaFlags;
  if (!list_like && !v.isScalar())
    return error(v, path) << yaml::wrongKind(yaml::kSingleValue, v);
  const std::string &text = v.scalar;

  auto integer = [&]() -> Result<int64_t> {
    std::optional<int64_t> x = yaml::parseInteger(text);
    if (!x)
      return Status(error(v, path) << yaml::wrongText(yaml::kInteger, text) << " (range "
                                   << rangeText(spec.ints) << ")");
    if (*x < spec.ints.lo || *x > spec.ints.hi)
      return Status(error(v, path) << *x << " " << outOfRange(spec.ints));
    return *x;
  };
  auto number = [&]() -> Result<double> {
    std::optional<double> x = yaml::parseNumber(text);
    if (!x)
      return Status(error(v, path) << yaml::wrongText(yaml::kNumber, text));
    if (!contains(spec.numbers, *x))
      return Status(error(v, path) << text << " " << outOfRange(spec.numbers));
    return *x;
  };
  auto boolean = [&]() -> Result<bool> {
    std::optional<bool> b = yaml::parseBoolean(text);
    if (v.outside && lenient_env_booleans_)
      return b.value_or(false); // reference-system.md §2.3: anything else is false
    if (!b)
      return Status(error(v, path) << yaml::wrongText(yaml::kBoolean, text));
    return *b;
  };
  auto choice = [&]() -> Result<const Choice *> {
    const std::string s = lower(trim(text));
    for (const Choice &c : spec.choices)
      if (s == c.name)
        return &c;
    return Status(error(v, path) << "'" << text << "' is not one of " << choiceNames(spec));
  };

  switch (spec.type) {
  case ValueType::kText: *std::get<std::string *>(f) = text; return Status::ok();
  case ValueType::kInteger: {
    RS_ASSIGN_OR_RETURN(int64_t x, integer());
    if (auto *p = std::get_if<int64_t *>(&f))
      **p = x;
    else
      *std::get<std::optional<int64_t> *>(f) = x;
    return Status::ok();
  }
  case ValueType::kNumber: {
    RS_ASSIGN_OR_RETURN(double x, number());
    if (auto *p = std::get_if<double *>(&f))
      **p = x;
    else
      *std::get<std::optional<double> *>(f) = x;
    return Status::ok();
  }
  case ValueType::kBoolean: {
    RS_ASSIGN_OR_RETURN(bool b, boolean());
    if (auto *p = std::get_if<bool *>(&f))
      **p = b;
    else
      *std::get<std::optional<bool> *>(f) = b;
    return Status::ok();
  }
  case ValueType::kChoice: {
    RS_ASSIGN_OR_RETURN(const Choice *c, choice());
    if (auto *e = std::get_if<EnumField>(&f)) {
      e->set(e->target, c->value);
    } else {
      // A text field keeps the first name of the value (aliases map to it).
      for (const Choice &canonical : spec.choices)
        if (canonical.value == c->value) {
          *std::get<std::string *>(f) = std::string(canonical.name);
          break;
        }
    }
    return Status::ok();
  }
  case ValueType::kTextList: {
    if (!v.isList())
      return error(v, path) << "expected a list of strings, got " << v.kindName();
    std::vector<std::string> &out = *std::get<std::vector<std::string> *>(f);
    out.clear();
    for (const yaml::Value &item : v.list) {
      if (!item.isScalar())
        return error(item, path) << "expected a string, got " << item.kindName();
      out.push_back(item.scalar);
    }
    return Status::ok();
  }
  case ValueType::kXlaFlags: {
    if (!v.isMap())
      return error(v, path) << "expected a map of XLA option name to value, got " << v.kindName();
    auto &out = *std::get<std::map<std::string, std::string> *>(f);
    out.clear();
    for (const auto &[name, value] : v.map) {
      const std::string key = std::string(path) + "." + name;
      bool valid_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (!valid_name)
        return error(value, key) << "flag name '" << name
                                 << "' must be letters, digits and '_' (no leading --)";
      if (!value.isScalar() || trim(value.scalar).empty())
        return error(value, key) << "expected a value (true, false, a number or text), got "
                                 << value.kindName();
      if (!isKnownXlaFlag(name)) { // a typo must fail here, not abort inside XLA
        const std::string hint = closestXlaFlag(name);
        return error(value, key) << "unknown XLA flag '" << name << "'"
                                 << (hint.empty()
                                         ? std::string(" (not an XLA option of this build)")
                                         : " (did you mean '" + hint + "'?)");
      }
      out[name] = std::string(trim(value.scalar));
    }
    return Status::ok();
  }
  case ValueType::kListen: {
    ListenAddress &out = *std::get<ListenAddress *>(f);
    const std::string s(trim(text));
    if (s.empty()) {
      out = ListenAddress{};
      return Status::ok();
    }
    std::string host, port;
    if (s.front() == '[') {
      size_t close = s.find(']');
      if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
        return error(v, path) << "expected [ipv6]:port, got '" << text << "'";
      host = s.substr(1, close - 1);
      port = s.substr(close + 2);
    } else {
      size_t colon = s.rfind(':');
      if (colon == std::string::npos)
        return error(v, path) << "expected host:port, got '" << text << "'";
      host = s.substr(0, colon);
      port = s.substr(colon + 1);
    }
    std::optional<int64_t> p = yaml::parseInteger(port);
    if (host.empty() || trim(port) != port || !p || *p < 0 || *p > 65535)
      return error(v, path) << "expected host:port with a port in [0, 65535], got '" << text << "'";
    out = ListenAddress{host, static_cast<int>(*p)};
    return Status::ok();
  }
  case ValueType::kReplicas: {
    int64_t &out = *std::get<int64_t *>(f);
    if (lower(trim(text)) == "all") {
      out = kAllReplicas;
      return Status::ok();
    }
    std::optional<int64_t> x = yaml::parseInteger(text);
    if (!x || *x < 1)
      return error(v, path) << "expected an integer >= 1 or 'all', got '" << text << "'";
    out = *x;
    return Status::ok();
  }
  case ValueType::kWaitSeconds: {
    double &out = *std::get<double *>(f);
    const std::string s = lower(trim(text));
    if (s == "inf" || s == "forever" || s == "-1") {
      out = std::numeric_limits<double>::infinity();
      return Status::ok();
    }
    std::optional<double> x = yaml::parseNumber(text);
    if (!x || *x < 0)
      return error(v, path) << "expected a number >= 0 or inf, got '" << text << "'";
    out = *x;
    return Status::ok();
  }
  case ValueType::kModelMap:
  case ValueType::kStructure: break;
  }
  return internalError() << "key '" << path << "' cannot be read as a single field";
}

Status checkOrigins(const KeyReader &r, std::string_view key,
                    const std::vector<std::string> &origins) {
  for (const std::string &origin : origins) {
    if (origin == "*")
      continue;
    const size_t sep = origin.find("://");
    const bool ok = sep != std::string::npos && sep > 0 && sep + 3 < origin.size() &&
                    origin.find('/', sep + 3) == std::string::npos &&
                    origin.find_first_of(" \t,", 0) == std::string::npos;
    if (!ok)
      return r.error(*r.lookup(key), key)
             << "'" << origin << "' is not an origin (scheme://host[:port], e.g. "
             << "https://app.example.com) or *";
  }
  return Status::ok();
}

std::string fieldText(const KeySpec &spec, FieldRef f) {
  const std::string unset(spec.unset_text);
  return std::visit(
      Overload{
          [](std::monostate) { return std::string(); },
          [](const std::string *s) { return *s; },
          [&](const int64_t *x) {
            if (spec.type == ValueType::kReplicas)
              return *x == kAllReplicas ? std::string("all") : *x == 0 ? unset : std::to_string(*x);
            return std::to_string(*x);
          },
          [&](const std::optional<int64_t> *x) { return *x ? std::to_string(**x) : unset; },
          [](const double *x) { return yaml::numberText(*x); },
          [&](const std::optional<double> *x) { return *x ? yaml::numberText(**x) : unset; },
          [](const bool *b) { return std::string(*b ? "true" : "false"); },
          [&](const std::optional<bool> *b) {
            return *b ? std::string(**b ? "true" : "false") : unset;
          },
          [](const std::vector<std::string> *items) { return listText(*items); },
          [](const std::map<std::string, std::string> *items) {
            std::string out = "{";
            for (const auto &[k, v] : *items)
              out += (out.size() > 1 ? ", " : "") + k + ": " + v;
            return out + "}";
          },
          [](const ListenAddress *a) { return a->text(); },
          [&](const EnumField &e) {
            const int value = e.get(e.target);
            for (const Choice &c : spec.choices)
              if (c.value == value && !c.alias)
                return std::string(c.name);
            return unset;
          },
      },
      f);
}

namespace detail {

const KeySpec *findSpec(const TableView &t, std::string_view path) {
  for (const KeySpec *s : t.specs)
    if (s->path == path)
      return s;
  return nullptr;
}

bool isSectionOf(const TableView &t, std::string_view path) {
  for (const KeySpec *s : t.specs)
    if (s->path.size() > path.size() && s->path.starts_with(path) && s->path[path.size()] == '.')
      return true;
  return false;
}

Status removedKeyError(const TableView &t, const KeyReader &r, std::string_view path,
                       const yaml::Value &v) {
  for (const RemovedKey &removed : *t.removed)
    if (removed.path == path)
      return r.error(v, path) << removed.message;
  return Status::ok();
}

} // namespace detail
} // namespace rs::config
