// Which provider of AOTInductor's C shim serves a .pt2 package, and why:
// aotrun's own shim (cpp/shim) when it implements every aoti_* function the
// model library imports, else a configured libtorch, unless an option or the
// environment forces one. The process keeps the first provider it loads
// (torch_runtime.hpp says why), so a package needing the other one is refused
// by name rather than bound to the wrong one.
#pragma once

#include <string>

#include "package/package_code.hpp"
#include "package/package_options.hpp"
#include "package/pt2/provider/torch_runtime.hpp"

namespace aotrun::pt2 {

enum class ProviderMode { Auto, Shim, Libtorch };

// What the options and the environment ask for. Read in this order, the
// first one set deciding the mode: the package option `provider`, the
// package option `libtorch` ("shim" forces the shim, a path forces that
// libtorch), $AOTRUN_PROVIDER, $AOTRUN_LIBTORCH (the same two forms); none:
// auto. The libtorch is the first path among the option `libtorch` and
// $AOTRUN_LIBTORCH (auto falls back to it).
struct ProviderRequest {
  ProviderMode mode = ProviderMode::Auto;
  std::string mode_source;  // "AOTRUN_PROVIDER=libtorch", ...; "" when nothing forced it
  std::string libtorch;     // libtorch_cpu.so or its directory; "" = none configured
  std::string libtorch_source;
  // Why only aotrun's shim can serve this model ("" when either can): a CUDA
  // model runs on the shim's CUDA layer only. Such a request fails unless the
  // shim implements everything the model imports.
  std::string shim_only;
};

// Throws Error INVALID_ARGUMENT naming an unknown value of the option
// `provider` or of $AOTRUN_PROVIDER (auto, shim, libtorch).
ProviderRequest provider_request(const Pt2Options& options);

// "auto", "shim", "libtorch" -> the mode; false for anything else.
bool parse_provider_mode(const std::string& word, ProviderMode* out);

struct ProviderChoice {
  const TorchShim* shim = nullptr;
  Provider kind = Provider::Shim;
  std::string reason;  // one sentence: what decided it
};

// Chooses (and loads, the first time) the provider for package `name`
// whose model library is `model_so` (extracted, not loaded). Throws Error
// LOAD_FAILED naming each function the only possible provider lacks (with
// the torch release that first has it), or the provider already in use and
// how to choose the other one in a fresh process.
ProviderChoice choose_provider(const ProviderRequest& request, const std::string& model_so, const std::string& name);

// What choose_provider would decide now, loading nothing: the same rule, run
// on the provider the process has now (a later open decides again, and
// differs if a provider is loaded in between). A refusal is returned, not
// thrown: provider "", reason its message, library the one it is about.
ProviderPreview preview_provider(const ProviderRequest& request, const std::string& model_so, const std::string& name);

}  // namespace aotrun::pt2
