#include "package/pt2/constants/constant_list.hpp"

#include <set>

#include "package/pt2/constants/source_constants.hpp"
#include "package/pt2/provider/tensor_convert.hpp"
#include "base/checked_math.hpp"
#include "base/dltensor.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {

constexpr size_t kMaxConstants = 1000000;

bool storage_extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride, int64_t offset,
                    uint64_t item, uint64_t* out) {
  uint64_t last = static_cast<uint64_t>(offset);  // index of the last element reached
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) {
      *out = 0;
      return true;
    }
    uint64_t step = 0;
    if (!checked_mul<uint64_t>(static_cast<uint64_t>(shape[d] - 1), static_cast<uint64_t>(stride[d]), &step) ||
        !checked_add<uint64_t>(last, step, &last)) {
      return false;
    }
  }
  return checked_add<uint64_t>(last, 1, &last) && checked_mul<uint64_t>(last, item, out);
}

std::vector<Pt2Constant> read_constants(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim,
                                        const std::string& sources) {
  const AotiFunctions& f = lib.fn();
  std::vector<Pt2Constant> out;
  if (f.num_constants == nullptr || f.constant_name == nullptr) return out;
  size_t n = 0;
  if (f.num_constants(h, &n) != 0) fail(Code::BadPackage, lib.failure("AOTInductorModelContainerGetNumConstants"));
  if (n > kMaxConstants) fail(Code::BadPackage, "the model reports " + std::to_string(n) + " constants");
  const std::vector<SourceConstant> src = parse_source_constants(sources, n);
  std::set<std::string> seen;
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Pt2Constant& c = out[i];
    ConstantInfo& info = c.info;
    const char* s = nullptr;
    if (f.constant_name(h, i, &s) != 0 || s == nullptr || *s == '\0') {
      fail(Code::BadPackage, "the model reports no name for constant " + std::to_string(i));
    }
    info.name = s;
    if (!seen.insert(info.name).second) fail(Code::BadPackage, "the model names two constants '" + info.name + "'");
    s = nullptr;
    info.original_name =
        f.constant_original_fqn != nullptr && f.constant_original_fqn(h, i, &s) == 0 && s != nullptr && *s != '\0'
            ? s
            : info.name;
    bool folded = false;
    if (f.constant_from_folded != nullptr && f.constant_from_folded(h, i, &folded) == 0) info.folded = folded;
    int32_t type = 0;  // torch::aot_inductor::ConstantType: Parameter is 1
    if (f.constant_type != nullptr && f.constant_type(h, i, &type) == 0) c.parameter = type == 1;
    int32_t dt = -1;
    if (f.constant_dtype != nullptr && f.constant_dtype(h, i, &dt) == 0) {
      if (!shim.dlpack_dtype(dt, &info.dtype)) {
        fail(Code::BadPackage,
             "constant '" + info.name + "' has torch dtype " + std::to_string(dt) + ", which aotrun cannot represent");
      }
      c.torch_dtype = dt;
    }
    size_t bytes = 0;
    if (f.constant_data_size != nullptr && f.constant_data_size(h, i, &bytes) == 0) {
      info.nbytes = bytes;
      c.size_known = true;
    }
    // The source's entry counts only when it names this constant and its
    // extent fits the bytes the library reports (or the source's own size,
    // where the library cannot say).
    info.shape_known = false;
    c.packed = i < src.size() && src[i].name == info.name && src[i].packed;
    if (i < src.size() && src[i].valid && src[i].name == info.name && c.torch_dtype >= 0) {
      const SourceConstant& e = src[i];
      uint64_t extent = 0;
      const uint64_t limit = c.size_known ? info.nbytes : static_cast<uint64_t>(e.data_size);
      if (e.data_size >= 0 && storage_extent(e.shape, e.stride, e.offset, element_bytes(info.dtype), &extent) &&
          extent <= limit && (!c.size_known || static_cast<uint64_t>(e.data_size) == info.nbytes)) {
        info.shape_known = true;
        info.shape = e.shape;
        c.stride = e.stride;
        c.storage_offset = e.offset;
        if (!c.size_known) {
          info.nbytes = static_cast<uint64_t>(e.data_size);
          c.size_known = true;
        }
      }
    }
  }
  return out;
}

}  // namespace aotrun::pt2
