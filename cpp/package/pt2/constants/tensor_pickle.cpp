#include "package/pt2/constants/tensor_pickle.hpp"

#include <cstring>
#include <utility>

#include "package/pt2/constants/constant_list.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

// A tensor record is ~200 bytes and a few dozen opcodes; these bounds are far
// above what torch writes and keep every input's cost small.
constexpr size_t kMaxPickle = 16 * 1024;
constexpr size_t kMaxStack = 64;
constexpr size_t kMaxMarks = 8;
constexpr uint32_t kMaxMemo = 256;
constexpr size_t kMaxString = 256;
constexpr size_t kMaxDims = 64;
constexpr size_t kMaxNodes = 256;  // of any one value (memo copies cannot blow up)

enum class Kind { Mark, Int, Bool, Str, Tuple, Global, Storage, Dict, Tensor };
enum class Callable { RebuildTensor, RebuildParameter, OrderedDict, StorageType };

struct Value {
  Kind kind = Kind::Int;
  int64_t i = 0;                        // Int, Bool
  std::string s;                        // Str
  std::vector<Value> items;             // Tuple
  Callable fn = Callable::OrderedDict;  // Global
  PickledTensor t;                      // Global (StorageType: its dtype), Storage, Tensor
  size_t nodes = 1;
};

Value of(Kind kind) {
  Value v;
  v.kind = kind;
  return v;
}

struct StorageKind {
  const char* name;
  int32_t dtype;  // c10::ScalarType
  uint64_t item;
};

// The storage classes torch.save names for the dtypes AOTInductor constants use.
constexpr StorageKind kStorages[] = {
    {"ByteStorage", 0, 1},         {"CharStorage", 1, 1},
    {"ShortStorage", 2, 2},        {"IntStorage", 3, 4},
    {"LongStorage", 4, 8},         {"HalfStorage", 5, 2},
    {"FloatStorage", 6, 4},        {"DoubleStorage", 7, 8},
    {"ComplexFloatStorage", 9, 8}, {"ComplexDoubleStorage", 10, 16},
    {"BoolStorage", 11, 1},        {"BFloat16Storage", 15, 2},
    {"Float8_e5m2Storage", 23, 1}, {"Float8_e4m3fnStorage", 24, 1},
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const std::string& label) : p_(data), n_(size), label_(label) {}

  PickledTensor run() {
    if (n_ > kMaxPickle) bad("is " + std::to_string(n_) + " bytes; a tensor record is far smaller");
    if (n_ < 2 || p_[0] != 0x80) unsupported("does not start with a PROTO opcode (torch.save writes protocol 2)");
    if (p_[1] != 2) unsupported("is pickle protocol " + std::to_string(p_[1]) + "; torch.save writes protocol 2");
    at_ = 2;
    while (true) {
      if (at_ >= n_) bad("ends without STOP");
      const size_t op_at = at_;
      const uint8_t op = p_[at_++];
      switch (op) {
        case 'c': push(global(op_at)); break;
        case 'q': put(u(1)); break;
        case 'r': put(u(4)); break;
        case 'h': get(u(1), op_at); break;
        case 'j': get(u(4), op_at); break;
        case '(':
          if (++marks_ > kMaxMarks) bad("nests more than " + std::to_string(kMaxMarks) + " MARKs");
          push(of(Kind::Mark));
          break;
        case 'X': push(str(u(4))); break;
        case 'K': push(integer(static_cast<int64_t>(u(1)))); break;
        case 'M': push(integer(static_cast<int64_t>(u(2)))); break;
        case 'J': push(integer(static_cast<int64_t>(static_cast<int32_t>(u(4))))); break;
        case 0x8a: push(integer(long1())); break;
        case 't': push(tuple(pop_to_mark(op_at))); break;
        case ')': push(tuple({})); break;
        case 0x85: push(tuple(pop_n(1, op_at))); break;
        case 0x86: push(tuple(pop_n(2, op_at))); break;
        case 0x87: push(tuple(pop_n(3, op_at))); break;
        case 0x88: push(boolean(true)); break;
        case 0x89: push(boolean(false)); break;
        case 'Q': push(persistent(pop(op_at), op_at)); break;
        case 'R': {
          Value args = pop(op_at);
          Value fn = pop(op_at);
          push(reduce(std::move(fn), std::move(args), op_at));
          break;
        }
        case '.': return stop(op_at);
        default: {
          static const char* hex = "0123456789abcdef";
          unsupported(std::string("has opcode 0x") + hex[op >> 4] + hex[op & 15] + " at byte " + std::to_string(op_at) +
                      ", outside what torch.save writes for one tensor");
        }
      }
    }
  }

 private:
  [[noreturn]] void bad(const std::string& what) const { fail(Code::BadPackage, label_ + ": pickled tensor " + what); }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail(Code::Unsupported, label_ + ": pickled tensor " + what);
  }
  std::string at(size_t pos) const { return " at byte " + std::to_string(pos); }

  uint64_t u(int bytes) {
    if (n_ - at_ < static_cast<size_t>(bytes)) bad("is truncated" + at(at_));
    uint64_t v = 0;
    for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | p_[at_ + static_cast<size_t>(k)];
    at_ += static_cast<size_t>(bytes);
    return v;
  }
  int64_t long1() {
    const size_t len = static_cast<size_t>(u(1));
    if (len > 8) unsupported("has an integer of " + std::to_string(len) + " bytes" + at(at_));
    if (n_ - at_ < len) bad("is truncated" + at(at_));
    uint64_t v = 0;
    for (size_t k = len; k-- > 0;) v = (v << 8) | p_[at_ + k];
    if (len > 0 && len < 8 && (p_[at_ + len - 1] & 0x80) != 0) v |= ~uint64_t{0} << (8 * len);  // sign
    at_ += len;
    return static_cast<int64_t>(v);
  }

  static Value integer(int64_t v) {
    Value x = of(Kind::Int);
    x.i = v;
    return x;
  }
  static Value boolean(bool v) {
    Value x = of(Kind::Bool);
    x.i = v ? 1 : 0;
    return x;
  }
  Value str(uint64_t len) {
    if (len > kMaxString) unsupported("has a string of " + std::to_string(len) + " bytes" + at(at_));
    if (n_ - at_ < len) bad("is truncated" + at(at_));
    Value x = of(Kind::Str);
    x.s.assign(reinterpret_cast<const char*>(p_ + at_), static_cast<size_t>(len));
    at_ += static_cast<size_t>(len);
    return x;
  }
  Value tuple(std::vector<Value> items) {
    Value x = of(Kind::Tuple);
    for (const auto& v : items) x.nodes += v.nodes;
    if (x.nodes > kMaxNodes) bad("builds a value of more than " + std::to_string(kMaxNodes) + " parts" + at(at_));
    x.items = std::move(items);
    return x;
  }

  std::string line(size_t op_at) {
    const void* nl = std::memchr(p_ + at_, '\n', std::min<size_t>(n_ - at_, 65));
    if (nl == nullptr) bad("has an unterminated or over-long GLOBAL" + at(op_at));
    const size_t len = static_cast<size_t>(static_cast<const uint8_t*>(nl) - (p_ + at_));
    std::string s(reinterpret_cast<const char*>(p_ + at_), len);
    at_ += len + 1;
    return s;
  }
  Value global(size_t op_at) {
    const std::string module = line(op_at);
    const std::string name = line(op_at);
    Value x = of(Kind::Global);
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      x.fn = Callable::RebuildTensor;
    } else if (module == "torch._utils" && name == "_rebuild_parameter") {
      x.fn = Callable::RebuildParameter;
    } else if (module == "collections" && name == "OrderedDict") {
      x.fn = Callable::OrderedDict;
    } else {
      const StorageKind* k = nullptr;
      for (const auto& s : kStorages) {
        if (module == "torch" && name == s.name) k = &s;
      }
      if (k == nullptr) {
        unsupported("names GLOBAL '" + module + "." + name + "'" + at(op_at) +
                    ", which is not one torch.save writes for a tensor");
      }
      x.fn = Callable::StorageType;
      x.t.storage_type = k->name;
      x.t.torch_dtype = k->dtype;
      x.t.item_bytes = k->item;
    }
    return x;
  }

  void push(Value v) {
    if (stack_.size() >= kMaxStack) bad("grows its stack past " + std::to_string(kMaxStack) + at(at_));
    stack_.push_back(std::move(v));
  }
  Value pop(size_t op_at) {
    if (stack_.empty() || stack_.back().kind == Kind::Mark) bad("pops an empty stack" + at(op_at));
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  std::vector<Value> pop_n(size_t k, size_t op_at) {
    std::vector<Value> v(k);
    for (size_t j = k; j-- > 0;) v[j] = pop(op_at);
    return v;
  }
  std::vector<Value> pop_to_mark(size_t op_at) {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1].kind != Kind::Mark) --m;
    if (m == 0) bad("has TUPLE without MARK" + at(op_at));
    std::vector<Value> v;
    for (size_t j = m; j < stack_.size(); ++j) v.push_back(std::move(stack_[j]));
    stack_.resize(m - 1);
    --marks_;
    return v;
  }
  void put(uint64_t idx) {
    if (idx >= kMaxMemo) unsupported("memoizes at index " + std::to_string(idx) + at(at_));
    if (stack_.empty() || stack_.back().kind == Kind::Mark) bad("memoizes nothing" + at(at_));
    if (memo_.size() <= idx) memo_.resize(static_cast<size_t>(idx) + 1);
    memo_[static_cast<size_t>(idx)] = {true, stack_.back()};
  }
  void get(uint64_t idx, size_t op_at) {
    if (idx >= memo_.size() || !memo_[static_cast<size_t>(idx)].first) {
      bad("reads memo entry " + std::to_string(idx) + " that was never stored" + at(op_at));
    }
    push(memo_[static_cast<size_t>(idx)].second);
  }

  int64_t nonneg(const Value& v, const char* what, size_t op_at) const {
    if (v.kind != Kind::Int || v.i < 0)
      bad(std::string("has a ") + what + " that is not a non-negative integer" + at(op_at));
    return v.i;
  }
  std::vector<int64_t> ints(const Value& v, const char* what, bool nonnegative, size_t op_at) const {
    if (v.kind != Kind::Tuple) bad(std::string("has ") + what + " that are not a tuple" + at(op_at));
    if (v.items.size() > kMaxDims) unsupported(std::string("has more than 64 ") + what + at(op_at));
    std::vector<int64_t> out;
    for (const auto& x : v.items) {
      if (x.kind != Kind::Int || (nonnegative && x.i < 0))
        bad(std::string("has ") + what + " that are not integers" + at(op_at));
      out.push_back(x.i);
    }
    return out;
  }

  // ('storage', torch.<T>Storage, key, location, numel): how torch.save
  // names the storage a tensor record points at.
  Value persistent(Value id, size_t op_at) {
    const auto& v = id.items;
    if (id.kind != Kind::Tuple || v.size() != 5 || v[0].kind != Kind::Str || v[0].s != "storage" ||
        v[1].kind != Kind::Global || v[1].fn != Callable::StorageType || v[2].kind != Kind::Str ||
        v[3].kind != Kind::Str) {
      unsupported("has a persistent id" + at(op_at) + " that is not ('storage', type, key, location, numel)");
    }
    Value x = of(Kind::Storage);
    x.t = v[1].t;
    x.t.key = v[2].s;
    if (x.t.key.empty() || x.t.key.size() > 32)
      bad("has a storage key of " + std::to_string(x.t.key.size()) + " bytes");
    for (char c : x.t.key) {
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) {
        bad("has a storage key '" + x.t.key + "' that is not a plain record name");
      }
    }
    x.t.location = v[3].s;
    x.t.numel = static_cast<uint64_t>(nonneg(v[4], "storage size", op_at));
    if (x.t.numel > (uint64_t{1} << 58)) bad("has a storage of " + std::to_string(x.t.numel) + " elements");
    return x;
  }

  Value reduce(Value fn, Value args, size_t op_at) {
    if (fn.kind != Kind::Global || args.kind != Kind::Tuple) bad("applies something that is not a GLOBAL" + at(op_at));
    const auto& a = args.items;
    auto is_dict = [](const Value& v) { return v.kind == Kind::Dict; };
    switch (fn.fn) {
      case Callable::OrderedDict:
        if (!a.empty()) unsupported("builds an OrderedDict with arguments" + at(op_at));
        return of(Kind::Dict);
      case Callable::RebuildTensor: {
        // (storage, storage_offset, sizes, strides, requires_grad, hooks[, metadata])
        if ((a.size() != 6 && a.size() != 7) || a[0].kind != Kind::Storage || a[4].kind != Kind::Bool ||
            !is_dict(a[5]) || (a.size() == 7 && !is_dict(a[6]))) {
          unsupported("calls _rebuild_tensor_v2" + at(op_at) + " with arguments torch.save does not write");
        }
        Value x = of(Kind::Tensor);
        x.t = a[0].t;
        x.t.storage_offset = nonneg(a[1], "storage offset", op_at);
        x.t.sizes = ints(a[2], "sizes", true, op_at);
        x.t.strides = ints(a[3], "strides", true, op_at);
        if (x.t.sizes.size() != x.t.strides.size())
          bad("has " + std::to_string(x.t.sizes.size()) + " sizes but " + std::to_string(x.t.strides.size()) +
              " strides" + at(op_at));
        uint64_t extent = 0;
        if (!storage_extent(x.t.sizes, x.t.strides, x.t.storage_offset, x.t.item_bytes, &extent) ||
            extent > x.t.numel * x.t.item_bytes) {
          bad("reaches past its storage of " + std::to_string(x.t.numel) + " elements" + at(op_at));
        }
        return x;
      }
      case Callable::RebuildParameter:
        // (tensor, requires_grad, hooks): a parameter is its tensor here.
        if (a.size() != 3 || a[0].kind != Kind::Tensor || a[1].kind != Kind::Bool || !is_dict(a[2])) {
          unsupported("calls _rebuild_parameter" + at(op_at) + " with arguments torch.save does not write");
        }
        return a[0];
      case Callable::StorageType: break;
    }
    unsupported("calls torch." + fn.t.storage_type + at(op_at) + ", which torch.save never does");
  }

  PickledTensor stop(size_t op_at) {
    if (at_ != n_) bad("has " + std::to_string(n_ - at_) + " bytes after STOP");
    if (stack_.size() != 1 || stack_[0].kind != Kind::Tensor) {
      unsupported("ends" + at(op_at) + " with something other than one tensor");
    }
    return std::move(stack_[0].t);
  }

  const uint8_t* p_;
  size_t n_;
  const std::string& label_;
  size_t at_ = 0;
  size_t marks_ = 0;
  std::vector<Value> stack_;
  std::vector<std::pair<bool, Value>> memo_;
};

}  // namespace

PickledTensor read_tensor_pickle(const uint8_t* data, size_t size, const std::string& label) {
  return Reader(data, size, label).run();
}

}  // namespace aotrun::pt2
