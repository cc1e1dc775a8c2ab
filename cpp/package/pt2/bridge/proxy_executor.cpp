// The model's proxy executor, made at open: the ops a model calls through
// AOTInductor's proxy executor (torch.linalg.inv, torch.unique, ...) run on
// aotrun's shim, which makes an executor from the model's extern kernel node
// list (docs/SHIM.md, "Proxy executor"). libtorch's own executor is C++
// inside libtorch, which aotrun never links: on libtorch such a model is
// refused at open, naming the ops, instead of failing in its first run.
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bridge.hpp"

namespace aotrun::pt2::bridge {
namespace {

std::string op_list(const std::vector<std::string>& targets) {
  std::vector<std::string> seen;
  std::string s;
  for (const std::string& t : targets) {
    bool dup = false;
    for (const std::string& x : seen) dup |= x == t;
    if (dup) continue;
    seen.push_back(t);
    s += (s.empty() ? "" : ", ") + t;
  }
  return s;
}

}  // namespace

std::shared_ptr<void> make_proxy_executor(const ExternNodes& nodes, const TorchShim& shim, const std::string& name,
                                          const std::string& provider_reason) {
  if (nodes.targets.empty()) return nullptr;
  const std::string calls = "package '" + name + "' calls " + op_list(nodes.targets) +
                            " through AOTInductor's proxy executor ('" + nodes.file + "')";
  if (shim.proxy_executor_create == nullptr || shim.proxy_executor_delete == nullptr) {
    fail(Code::Unsupported, calls + "; aotrun makes one on its own shim only (libtorch's is C++ inside libtorch), " +
                                "and this package runs on libtorch (" + provider_reason +
                                "): leave the provider to auto, or set it to shim");
  }
  void* h = nullptr;
  if (shim.proxy_executor_create(nodes.json.data(), nodes.json.size(), &h) != 0 || h == nullptr) {
    const char* why = shim.last_error != nullptr ? shim.last_error() : nullptr;
    fail(Code::Unsupported, calls + ", and aotrun's shim cannot run it: " + (why != nullptr ? why : "(no reason)"));
  }
  return std::shared_ptr<void>(h, shim.proxy_executor_delete);
}

}  // namespace aotrun::pt2::bridge
