#include "package/pt2/constants/parameters.hpp"

#include <cstring>
#include <string>
#include <unordered_map>

namespace aotrun::pt2 {
namespace {

// torch::aot_inductor::ConstantType (aoti_runtime/constant_type.h).
constexpr int32_t kParameter = 1;

}  // namespace

size_t declare_parameters(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim, bool cuda) {
  const AotiFunctions& f = lib.fn();
  if (cuda || shim.declare_constant == nullptr || f.extract_constants == nullptr || f.num_constants == nullptr ||
      f.constant_name == nullptr || f.constant_original_fqn == nullptr || f.constant_type == nullptr) {
    return 0;
  }
  size_t n = 0;
  if (f.num_constants(h, &n) != 0) return 0;
  // The extracted list names each constant by its original FQN
  // ("layer.0.weight": torch 2.13-2.15), the per-index getters by that and
  // by its internal name ("layer_0_weight"): both are keys here. A key two
  // constants of different types share is declared for neither.
  std::unordered_map<std::string, int32_t> type_of;
  type_of.reserve(2 * n);
  const auto note = [&](const char* key, int32_t type) {
    if (key == nullptr) return;
    const auto [it, fresh] = type_of.emplace(key, type);
    if (!fresh && it->second != type) it->second = -1;
  };
  for (size_t i = 0; i < n; ++i) {
    const char* fqn = nullptr;
    const char* name = nullptr;
    int32_t type = 0;
    if (f.constant_type(h, i, &type) != 0) continue;
    if (f.constant_original_fqn(h, i, &fqn) == 0) note(fqn, type);
    if (f.constant_name(h, i, &name) == 0 && name != nullptr && (fqn == nullptr || std::strcmp(name, fqn) != 0)) {
      note(name, type);
    }
  }
  const AotiConstantEntry* entries = nullptr;
  size_t count = 0;
  if (f.extract_constants(h, &entries, &count, false) != 0 || (entries == nullptr && count > 0)) return 0;
  size_t declared = 0;
  for (size_t i = 0; i < count; ++i) {
    const AotiConstantEntry& e = entries[i];
    if (e.name == nullptr || e.handle == nullptr) continue;
    const auto it = type_of.find(e.name);
    if (it == type_of.end() || it->second != kParameter) continue;
    if (shim.declare_constant(e.handle) == 0) ++declared;  // a refusal leaves it undeclared
  }
  // The shim records its refusals as this thread's last error: not this
  // create's failure.
  if (shim.set_last_error != nullptr) shim.set_last_error("");
  return declared;
}

}  // namespace aotrun::pt2
