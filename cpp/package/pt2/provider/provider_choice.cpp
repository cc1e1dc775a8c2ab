#include "package/pt2/provider/provider_choice.hpp"

#include <cstdlib>

#include "base/error.hpp"
#include "linkinfo/link_findings.hpp"

namespace aotrun::pt2 {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

const char* mode_word(ProviderMode m) {
  return m == ProviderMode::Shim ? "shim" : m == ProviderMode::Libtorch ? "libtorch" : "auto";
}

// A libtorch setting ("shim" or a path) as a mode and a libtorch.
void apply_libtorch_setting(const std::string& value, const std::string& source, ProviderRequest* r, bool decides) {
  if (value.empty()) return;
  const bool shim = value == kAotrunShim;
  if (decides && r->mode_source.empty()) {
    r->mode = shim ? ProviderMode::Shim : ProviderMode::Libtorch;
    r->mode_source = source;
  }
  if (!shim && r->libtorch.empty()) {
    r->libtorch = value;
    r->libtorch_source = source;
  }
}

void apply_provider_setting(const std::string& value, const std::string& source, ProviderRequest* r) {
  if (value.empty() || !r->mode_source.empty()) return;
  ProviderMode m;
  if (!parse_provider_mode(value, &m)) {
    fail(Code::InvalidArgument,
         source + " names an unknown C shim provider; expected auto, shim (aotrun's own) or libtorch");
  }
  r->mode = m;
  // auto chosen explicitly still counts as "nothing forced": the libtorch
  // settings below only configure the fallback then.
  r->mode_source = m == ProviderMode::Auto ? "-" : source;
}

std::string names_with_releases(const std::vector<MissingShim>& missing) {
  std::string s;
  for (const auto& m : missing) {
    s += (s.empty() ? "" : ", ") + m.name + " (first in " + m.first_release + ")";
    // The one CUDA fallback aotrun leaves out on purpose: say how to avoid it.
    if (m.name == "aoti_torch_cuda_convolution") {
      s += " [aotrun's CUDA layer has no cuDNN convolution: export the model with "
           "torch._inductor.config.max_autotune = True and max_autotune_conv_backends = \"TRITON\"; "
           "docs/SHIM.md, \"CUDA\"]";
    }
  }
  return s;
}

const char* kOneProvider =
    "one process runs all its .pt2 models on one provider: a model library's DT_NEEDED libtorch_cpu.so binds to the "
    "first loaded object of that name, whichever provider it belongs to";

std::string describe(const ProviderInUse& p) {
  const std::string who = p.by_host ? "loaded by the host before aotrun" : "loaded for an earlier .pt2 package";
  return (p.kind == Provider::Shim ? "aotrun's shim (" : "libtorch (") + p.source + ", " + who + ")";
}

const char* kSetLibtorch =
    "set AOTRUN_LIBTORCH (or the package option 'libtorch') to libtorch_cpu.so or the directory holding it, e.g. "
    "<site-packages>/torch/lib (scripts/fetch-libtorch.sh downloads one)";

// What aotrun's shim lacks of what the model imports.
struct ShimCoverage {
  bool available = false;  // the shim library is beside this libaotrun
  size_t calls = 0;        // aoti_* functions the model imports
  std::vector<MissingShim> missing;
};

ShimCoverage shim_coverage(const std::string& model_so) {
  ShimCoverage c;
  const std::string lib = bundled_shim_library();
  if (lib.empty()) return c;
  c.available = true;
  const LinkFindings f = examine_library(model_so, lib, "");
  c.calls = f.shim_calls.size();
  c.missing = f.shim_missing;  // the CUDA layer beside the shim counts (examine_library)
  return c;
}

}  // namespace

bool parse_provider_mode(const std::string& word, ProviderMode* out) {
  for (ProviderMode m : {ProviderMode::Auto, ProviderMode::Shim, ProviderMode::Libtorch}) {
    if (word == mode_word(m)) {
      *out = m;
      return true;
    }
  }
  return false;
}

ProviderRequest provider_request(const Pt2Options& options) {
  ProviderRequest r;
  apply_provider_setting(options.provider, "the package option 'provider' ('" + options.provider + "')", &r);
  apply_libtorch_setting(options.libtorch, "the package option 'libtorch' ('" + options.libtorch + "')", &r, true);
  const std::string provider_env = env("AOTRUN_PROVIDER"), libtorch_env = env("AOTRUN_LIBTORCH");
  apply_provider_setting(provider_env, "AOTRUN_PROVIDER=" + provider_env, &r);
  apply_libtorch_setting(libtorch_env, "AOTRUN_LIBTORCH=" + libtorch_env, &r, true);
  if (r.mode_source == "-") r.mode_source.clear();
  return r;
}

namespace {

// The rule: which provider serves package `pkg` (a sentence naming it), given
// the request, what aotrun's shim lacks of the model's imports, and the
// provider the process already has. Sets *reason; throws Error LOAD_FAILED
// to refuse. Pure: choose_provider runs it under the provider lock and loads
// what it picks, preview_provider runs it and loads nothing.
ProviderPick pick_provider(const ProviderRequest& request, const ShimCoverage& shim,
                           const std::optional<ProviderInUse>& in_use, const std::string& pkg,
                           std::string* reason_out) {
  std::string& reason = *reason_out;
  const std::string covered =
      "aotrun's shim implements all " + std::to_string(shim.calls) + " aoti_* function(s) the model library imports";
  const std::string lacks = std::to_string(shim.missing.size()) + " function(s) of libtorch's C shim that aotrun's " +
                            "shim lacks: " + names_with_releases(shim.missing);
  if (!request.shim_only.empty()) {
    if (!shim.available) {
      fail(Code::LoadFailed, pkg + ": " + request.shim_only + ", and this libaotrun has no aotrun/torch-standins " +
                                 "beside it (built without AOTRUN_BUILD_SHIM, or installed without it)");
    }
    if (!shim.missing.empty()) fail(Code::LoadFailed, pkg + " imports " + lacks + "; " + request.shim_only);
  }
  const std::string forced = "forced by " + request.mode_source;
  if (in_use) {
    const bool shim_used = in_use->kind == Provider::Shim;
    if (request.mode == ProviderMode::Shim && !shim_used) {
      fail(Code::LoadFailed, pkg + ": " + request.mode_source + " asks for aotrun's shim, but this process already " +
                                 "uses " + describe(*in_use) + "; " + kOneProvider +
                                 " (run it in another process, or leave the provider to auto)");
    }
    // The same path again (a directory of stand-ins named as a libtorch) is no conflict.
    if (request.mode == ProviderMode::Libtorch && shim_used && request.libtorch != in_use->source) {
      fail(Code::LoadFailed, pkg + ": " + request.mode_source + " asks for libtorch, but this process already " +
                                 "uses " + describe(*in_use) + "; " + kOneProvider +
                                 " (force libtorch before the first .pt2 is opened: AOTRUN_PROVIDER=libtorch)");
    }
    if (shim_used && !shim.missing.empty()) {
      fail(Code::LoadFailed, pkg + " imports " + lacks + "; this process already uses " + describe(*in_use) +
                                 ", and libtorch cannot be loaded beside it: " + kOneProvider +
                                 " (run it in a process that forces libtorch: AOTRUN_PROVIDER=libtorch and " +
                                 "AOTRUN_LIBTORCH)");
    }
    if (request.mode != ProviderMode::Auto) {
      reason = forced + " (" + describe(*in_use) + ")";
    } else if (shim_used) {
      reason = covered + " (" + describe(*in_use) + ")";
    } else {
      reason = "libtorch is already in use in this process (" + in_use->source +
               (in_use->by_host ? ", loaded by the host" : "") + "): a model's libtorch_cpu.so binds to it";
    }
    return {in_use->kind, ""};
  }
  switch (request.mode) {
    case ProviderMode::Shim:
      if (!shim.available) {
        fail(Code::LoadFailed, pkg + ": " + request.mode_source + " asks for aotrun's own shim, but this libaotrun " +
                                   "has no aotrun/torch-standins beside it (built without AOTRUN_BUILD_SHIM, or " +
                                   "installed without it)");
      }
      if (!shim.missing.empty()) {
        fail(Code::LoadFailed, pkg + " imports " + lacks + " (the shim was " + forced +
                                   "; run it on libtorch: AOTRUN_PROVIDER=libtorch and AOTRUN_LIBTORCH)");
      }
      reason = forced;
      return {Provider::Shim, ""};
    case ProviderMode::Libtorch:
      if (request.libtorch.empty()) {
        fail(Code::LoadFailed,
             pkg + ": " + request.mode_source + " asks for libtorch, and no libtorch is configured: " + kSetLibtorch);
      }
      reason = forced + (request.libtorch_source == request.mode_source
                             ? std::string()
                             : " (libtorch from " + request.libtorch_source + ")");
      return {Provider::Libtorch, request.libtorch};
    case ProviderMode::Auto: break;
  }
  if (shim.available && shim.missing.empty()) {
    reason = covered;
    return {Provider::Shim, ""};
  }
  const std::string why_not_shim = shim.available ? "the model library imports " + lacks
                                                  : "aotrun's own shim is not beside this libaotrun "
                                                    "(aotrun/torch-standins)";
  if (!request.libtorch.empty()) {
    reason = why_not_shim + "; libtorch from " + request.libtorch_source;
    return {Provider::Libtorch, request.libtorch};
  }
  if (shim.available) {
    fail(Code::LoadFailed, pkg + " imports " + lacks + ", and no libtorch is configured to run it: " + kSetLibtorch);
  }
  fail(Code::LoadFailed, "running a PyTorch .pt2 package needs a C shim provider: " + why_not_shim +
                             ", and no libtorch is configured: " + kSetLibtorch);
}

ShimCoverage coverage_for(const ProviderRequest& request, const std::string& model_so) {
  return request.mode == ProviderMode::Libtorch ? ShimCoverage{} : shim_coverage(model_so);
}

}  // namespace

ProviderChoice choose_provider(const ProviderRequest& request, const std::string& model_so, const std::string& name) {
  const ShimCoverage shim = coverage_for(request, model_so);  // read outside the lock
  std::string reason;
  const SettledProvider settled = settle_provider([&](const std::optional<ProviderInUse>& in_use) {
    return pick_provider(request, shim, in_use, "package '" + name + "'", &reason);
  });
  ProviderChoice c;
  c.shim = settled.shim;
  c.kind = settled.in_use.kind;
  c.reason = reason;
  // A libtorch path that holds aotrun's stand-ins serves as the shim.
  if (c.kind == Provider::Shim && request.mode == ProviderMode::Libtorch && !settled.in_use.by_host) {
    c.reason += " ('" + settled.in_use.source + "' holds aotrun's shim stand-ins)";
  }
  return c;
}

ProviderPreview preview_provider(const ProviderRequest& request, const std::string& model_so, const std::string& name) {
  const ShimCoverage shim = coverage_for(request, model_so);
  const std::optional<ProviderInUse> in_use = provider_in_use();
  ProviderPreview p;
  try {
    const ProviderPick pick = pick_provider(request, shim, in_use, "package '" + name + "'", &p.reason);
    const ServingLibrary lib =
        in_use ? serving_library(in_use->kind, in_use->source) : serving_library(pick.kind, pick.libtorch);
    p.provider = provider_name(lib.kind);  // a libtorch path may hold the shim's stand-ins
    p.library = lib.file;
  } catch (const Error& e) {
    // Refused: the library the refusal is about, the one the process has or
    // the one the request would have used.
    p.reason = e.what();
    p.library = (in_use                                   ? serving_library(in_use->kind, in_use->source)
                 : request.mode == ProviderMode::Libtorch ? serving_library(Provider::Libtorch, request.libtorch)
                                                          : serving_library(Provider::Shim, ""))
                    .file;
  }
  return p;
}

}  // namespace aotrun::pt2

namespace aotrun {

bool is_provider_word(const std::string& word) {
  pt2::ProviderMode mode;
  return pt2::parse_provider_mode(word, &mode);
}

}  // namespace aotrun
