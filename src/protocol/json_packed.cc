//===- protocol/json_packed.cc - KServe V2 JSON bodies without a DOM per element -===//
#include "protocol/json_packed.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rs::protocol {
namespace {

using nlohmann::json;
using DomParser = nlohmann::detail::json_sax_dom_parser<json>;

/// Marks a binary node as packed `data` (any other binary node is not ours); the second
/// when some doubles were narrowed to float for an FP32 tensor.
constexpr std::uint8_t kPackedSubtype = 0x52;
constexpr std::uint8_t kPackedNarrowedSubtype = 0x53;

/// The DOM parser for everything but inputs[i].data, which it packs.
class PackingSax {
public:
  PackingSax(json &root, size_t text_bytes)
      : dom_(root, /*allow_exceptions=*/false), reserve_left_(text_bytes) {}

  std::string error;

  bool null() {
    if (sub_)
      return sub_->null();
    return packing() ? (tag('N'), true) : dom_.null();
  }
  bool boolean(bool v) {
    if (sub_)
      return sub_->boolean(v);
    return packing() ? (tag(v ? 'T' : 'f'), true) : dom_.boolean(v);
  }
  bool number_integer(json::number_integer_t v) {
    if (sub_)
      return sub_->number_integer(v);
    if (!packing())
      return dom_.number_integer(v);
    if (std::in_range<int8_t>(v))
      word('b', static_cast<int8_t>(v));
    else if (std::in_range<int32_t>(v))
      word('i', static_cast<int32_t>(v));
    else
      word('I', v);
    return true;
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (sub_)
      return sub_->number_unsigned(v);
    if (!packing())
      return dom_.number_unsigned(v);
    if (std::in_range<uint8_t>(v))
      word('c', static_cast<uint8_t>(v));
    else if (std::in_range<uint32_t>(v))
      word('u', static_cast<uint32_t>(v));
    else
      word('U', v);
    return true;
  }
  bool number_float(json::number_float_t v, const json::string_t &s) {
    if (sub_)
      return sub_->number_float(v, s);
    if (!packing())
      return dom_.number_float(v, s);
    // A float keeps the value when it is exact, or when the tensor is FP32 anyway (the
    // conversion json_tensor.cc makes; a value beyond float range stays a double for its
    // error message).
    const float f = static_cast<float>(v);
    if (static_cast<double>(f) == v) {
      word('g', f);
    } else if (fp32_ && std::isfinite(f)) {
      word('g', f);
      narrowed_ = true;
    } else {
      word('F', v);
    }
    return true;
  }
  bool string(json::string_t &v) {
    if (sub_)
      return sub_->string(v);
    if (packing()) {
      text('S', v);
      return true;
    }
    if (inInput() && frames_[2].key == "datatype")
      frames_[2].datatype = v;
    return dom_.string(v);
  }
  bool binary(json::binary_t &v) { return sub_ ? sub_->binary(v) : dom_.binary(v); }

  bool start_object(std::size_t n) {
    if (packing() || sub_) {
      // An object inside data: built on its own, stored as its JSON text.
      if (!sub_) {
        sub_root_ = json();
        sub_ = std::make_unique<DomParser>(sub_root_, false);
      }
      ++sub_depth_;
      return sub_->start_object(n);
    }
    frames_.push_back({true, "", ""});
    return dom_.start_object(n);
  }
  bool key(json::string_t &k) {
    if (sub_)
      return sub_->key(k);
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    if (sub_) {
      const bool ok = sub_->end_object();
      if (--sub_depth_ == 0) {
        text('J', sub_root_.dump(-1, ' ', false, json::error_handler_t::replace));
        sub_.reset();
      }
      return ok;
    }
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (sub_)
      return sub_->start_array(n);
    if (packing()) {
      tag('[');
      ++pack_depth_;
      return true;
    }
    if (inInput() && frames_[2].key == "data") {
      packed_.clear();
      // Room for as many bytes as the text has left: a packed element takes no more than
      // its text for the common forms, so the buffer rarely grows (and never doubles).
      packed_.reserve(reserve_left_);
      reserve_left_ = 0;
      pack_depth_ = 1;
      fp32_ = frames_[2].datatype == "FP32";
      narrowed_ = false;
      return true;
    }
    frames_.push_back({false, "", ""});
    return dom_.start_array(n);
  }
  bool end_array() {
    if (sub_)
      return sub_->end_array();
    if (packing()) {
      if (--pack_depth_ > 0) {
        tag(']');
        return true;
      }
      json::binary_t bin(std::move(packed_), narrowed_ ? kPackedNarrowedSubtype : kPackedSubtype);
      packed_ = {};
      return dom_.binary(bin);
    }
    frames_.pop_back();
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string &, const Exception &e) {
    error = e.what();
    return false;
  }

private:
  struct Frame {
    bool object;
    std::string key;      // the key whose value comes next (objects)
    std::string datatype; // an input's "datatype" when seen before its "data"
  };

  bool packing() const { return pack_depth_ > 0; }
  /// The value about to come is a member of root.inputs[i].
  bool inInput() const {
    return frames_.size() == 3 && frames_[0].object && frames_[0].key == "inputs" &&
           !frames_[1].object && frames_[2].object;
  }
  void tag(char t) { packed_.push_back(static_cast<std::uint8_t>(t)); }
  template <class T> void word(char t, T v) {
    // Past the reservation, grow by a quarter: doubling would hold 3x the data while copying.
    if (packed_.size() + 1 + sizeof(T) > packed_.capacity())
      packed_.reserve(packed_.capacity() + packed_.capacity() / 4 + 4096);
    tag(t);
    const auto *p = reinterpret_cast<const std::uint8_t *>(&v);
    packed_.insert(packed_.end(), p, p + sizeof(T));
  }
  void text(char t, const std::string &s) {
    const uint64_t n = s.size();
    word(t, n);
    packed_.reserve(packed_.size() + s.size());
    packed_.insert(packed_.end(), s.begin(), s.end());
  }

  DomParser dom_;
  std::vector<Frame> frames_;
  std::vector<std::uint8_t> packed_;
  int pack_depth_ = 0;
  size_t reserve_left_;
  bool fp32_ = false;
  bool narrowed_ = false;
  std::unique_ptr<DomParser> sub_;
  json sub_root_;
  int sub_depth_ = 0;
};

} // namespace

Result<json> parseInferJson(std::string_view text) {
  json root;
  PackingSax sax(root, text.size());
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const json::exception &e) {
    return invalidArgument() << "invalid JSON: " << e.what();
  }
  if (!ok)
    return invalidArgument() << "invalid JSON: " << sax.error;
  return root;
}

bool isPackedData(const json &v) {
  return v.is_binary() && v.get_binary().has_subtype() &&
         (v.get_binary().subtype() == kPackedSubtype ||
          v.get_binary().subtype() == kPackedNarrowedSubtype);
}

bool packedDataNarrowedToFloat(const json &v) {
  return isPackedData(v) && v.get_binary().subtype() == kPackedNarrowedSubtype;
}

Status walkPackedData(const json &v, const std::function<Status(const PackedEvent &)> &fn) {
  const std::vector<std::uint8_t> &b = v.get_binary();
  size_t i = 0;
  auto read = [&](auto &out) {
    std::memcpy(&out, b.data() + i, sizeof(out));
    i += sizeof(out);
    return out;
  };
  // The next stored value (of `stored`'s type) as a JSON number of `as`'s type.
  auto value = [&](auto stored, auto as) { return json(static_cast<decltype(as)>(read(stored))); };
  while (i < b.size()) {
    const char t = static_cast<char>(b[i++]);
    PackedEvent e;
    json leaf;
    switch (t) {
    case '[': e.kind = PackedEvent::kOpen; break;
    case ']': e.kind = PackedEvent::kClose; break;
    case 'N': leaf = nullptr; break;
    case 'T': leaf = true; break;
    case 'f': leaf = false; break;
    case 'b': leaf = value(int8_t{}, json::number_integer_t{}); break;
    case 'i': leaf = value(int32_t{}, json::number_integer_t{}); break;
    case 'I': leaf = value(json::number_integer_t{}, json::number_integer_t{}); break;
    case 'c': leaf = value(uint8_t{}, json::number_unsigned_t{}); break;
    case 'u': leaf = value(uint32_t{}, json::number_unsigned_t{}); break;
    case 'U': leaf = value(json::number_unsigned_t{}, json::number_unsigned_t{}); break;
    case 'g': leaf = value(float{}, json::number_float_t{}); break;
    case 'F': leaf = value(json::number_float_t{}, json::number_float_t{}); break;
    case 'S':
    case 'J': {
      uint64_t n;
      read(n);
      std::string s(reinterpret_cast<const char *>(b.data() + i), n);
      i += n;
      leaf = t == 'S' ? json(std::move(s)) : json::parse(s, nullptr, false);
      break;
    }
    default: return internalError() << "packed json data: bad tag " << int(t);
    }
    if (e.kind == PackedEvent::kLeaf)
      e.leaf = &leaf;
    RS_RETURN_IF_ERROR(fn(e));
  }
  return Status::ok();
}

} // namespace rs::protocol
