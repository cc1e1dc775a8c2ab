#include "package/pt2/constants/parameters.hpp"

#include <string>
#include <unordered_map>

namespace aotrun::pt2 {

size_t declare_parameters(const AotiLibrary& lib, AotiContainerHandle h, const TorchShim& shim,
                          const std::vector<Pt2Constant>& list, bool cuda) {
  const AotiFunctions& f = lib.fn();
  if (cuda || shim.declare_constant == nullptr || f.extract_constants == nullptr) return 0;
  // The extracted list names each constant by its original FQN
  // ("layer.0.weight": torch 2.13-2.15), `list` by that and by its internal
  // name ("layer_0_weight"): both are keys here. A key that a parameter and
  // another constant share is declared for neither.
  std::unordered_map<std::string, bool> parameter;
  parameter.reserve(2 * list.size());
  const auto note = [&](const std::string& key, bool is) {
    const auto [it, fresh] = parameter.emplace(key, is);
    if (!fresh) it->second = it->second && is;
  };
  for (const Pt2Constant& c : list) {
    note(c.info.original_name, c.parameter);
    if (c.info.name != c.info.original_name) note(c.info.name, c.parameter);
  }
  const AotiConstantEntry* entries = nullptr;
  size_t count = 0;
  if (f.extract_constants(h, &entries, &count, false) != 0 || (entries == nullptr && count > 0)) return 0;
  size_t declared = 0;
  for (size_t i = 0; i < count; ++i) {
    const AotiConstantEntry& e = entries[i];
    if (e.name == nullptr || e.handle == nullptr) continue;
    const auto it = parameter.find(e.name);
    if (it == parameter.end() || !it->second) continue;
    if (shim.declare_constant(e.handle) == 0) ++declared;  // a refusal leaves it undeclared
  }
  // The shim records its refusals as this thread's last error: not this
  // create's failure.
  if (shim.set_last_error != nullptr) shim.set_last_error("");
  return declared;
}

}  // namespace aotrun::pt2
