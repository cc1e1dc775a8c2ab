// Package options, open/close and introspection.

#include "handles.hpp"
#include "package/package_options.hpp"
#include "package/symbols.hpp"
#include "status.hpp"
#include "struct_out.hpp"

using aotrun::Code;
using aotrun::fail;
using aotrun::capi::copy_out;
using aotrun::capi::guarded;
using aotrun::capi::require;

namespace {

void fill_tensor(const aotrun::TensorSpec& spec, aotrun_tensor_info* info) {
  aotrun_tensor_info t{};
  t.struct_size = sizeof(t);
  t.name = spec.name.c_str();
  t.dtype = spec.dtype;
  t.ndim = spec.known ? static_cast<int32_t>(spec.shape.size()) : -1;  // -1: rank unknown
  t.shape = spec.shape.data();
  copy_out(t, info);
}

// Input or output `index` (`kind`), or INVALID_ARGUMENT naming the range.
const aotrun::TensorSpec& tensor_at(const std::vector<aotrun::TensorSpec>& v, size_t index, const std::string& kind) {
  if (index >= v.size()) {
    fail(Code::InvalidArgument, kind + " index " + std::to_string(index) + " out of range (package has " +
                                    std::to_string(v.size()) + " " + kind + "s)");
  }
  return v[index];
}

// The model's own name for a tensor, else its name (the C API's rule).
const char* own_name(const aotrun::TensorSpec& spec) {
  return spec.model_name.empty() ? spec.name.c_str() : spec.model_name.c_str();
}

}  // namespace

extern "C" {

aotrun_status* aotrun_package_options_create(aotrun_package_options** out) {
  return guarded([&] {
    require(out, "out");
    *out = new aotrun_package_options();
  });
}

void aotrun_package_options_free(aotrun_package_options* options) { delete options; }

aotrun_status* aotrun_package_options_set_verify_hashes(aotrun_package_options* options, int verify) {
  return guarded([&] {
    require(options, "options");
    options->options.verify_hashes = verify != 0;
  });
}

aotrun_status* aotrun_package_options_set_expected_sha256(aotrun_package_options* options, const char* sha256_hex) {
  return guarded([&] {
    require(options, "options");
    if (sha256_hex == nullptr) {
      options->options.expected_sha256.clear();
      return;
    }
    std::string hex(sha256_hex);
    if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      fail(Code::InvalidArgument, "expected sha256 must be 64 hex digits, got '" + hex + "'");
    }
    for (auto& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    options->options.expected_sha256 = hex;
  });
}

aotrun_status* aotrun_package_options_set_allow_untrusted_files(aotrun_package_options* options, int allow) {
  return guarded([&] {
    require(options, "options");
    options->options.allow_untrusted_files = allow != 0;
  });
}

aotrun_status* aotrun_package_options_set_pt2_model(aotrun_package_options* options, const char* name) {
  return guarded([&] {
    require(options, "options");
    if (name != nullptr && (*name == '\0' || std::strchr(name, '/') != nullptr)) {
      fail(Code::InvalidArgument, std::string("pt2 model name '") + name + "' is empty or contains '/'");
    }
    options->options.pt2.model = name != nullptr ? name : "model";
  });
}

aotrun_status* aotrun_package_options_set_libtorch(aotrun_package_options* options, const char* path) {
  return guarded([&] {
    require(options, "options");
    if (path != nullptr && *path == '\0') fail(Code::InvalidArgument, "libtorch path is empty");
    options->options.pt2.libtorch = path != nullptr ? path : "";
  });
}

aotrun_status* aotrun_package_options_set_pt2_pad_batch(aotrun_package_options* options, int pad) {
  return guarded([&] {
    require(options, "options");
    options->options.pt2.pad_batch = pad != 0;
  });
}

aotrun_status* aotrun_package_options_set_pt2_above_compiled_max(aotrun_package_options* options, int allow) {
  return guarded([&] {
    require(options, "options");
    options->options.pt2.above_compiled_max = allow != 0;
  });
}

aotrun_status* aotrun_package_options_set_provider(aotrun_package_options* options, const char* provider) {
  return guarded([&] {
    require(options, "options");
    if (provider != nullptr && !aotrun::is_provider_word(provider)) {
      fail(Code::InvalidArgument,
           std::string("unknown C shim provider '") + provider + "' (expected auto, shim or libtorch)");
    }
    options->options.pt2.provider = provider != nullptr ? provider : "";
  });
}

aotrun_status* aotrun_package_open(const char* path, const aotrun_package_options* options, aotrun_package** out) {
  return guarded([&] {
    require(path, "path");
    require(out, "out");
    aotrun::PackageOptions defaults;
    auto pkg = aotrun::Package::open(path, options ? options->options : defaults);
    *out = new aotrun_package{std::move(pkg)};
  });
}

aotrun_status* aotrun_package_preview_provider(const char* path, aotrun_package_options* options, const char** provider,
                                               const char** library, const char** reason) {
  return guarded([&] {
    require(path, "path");
    require(options, "options");
    options->preview = aotrun::Package::preview_provider(path, options->options);
    if (provider != nullptr) *provider = options->preview.provider.c_str();
    if (library != nullptr) *library = options->preview.library.c_str();
    if (reason != nullptr) *reason = options->preview.reason.c_str();
  });
}

void aotrun_package_close(aotrun_package* package) { delete package; }

const char* aotrun_mode_name(aotrun_mode mode) {
  switch (aotrun::capi::enum_value(mode)) {
    case AOTRUN_MODE_THREADED: return "threaded";
    case AOTRUN_MODE_SINGLE_THREADED: return "single_threaded";
    case AOTRUN_MODE_GRAPH: return "graph";
    default: break;
  }
  return "unknown";
}

aotrun_status* aotrun_package_get_info(const aotrun_package* package, aotrun_package_info* info) {
  return guarded([&] {
    require(package, "package");
    require(info, "info");
    const aotrun::Package& p = *package->pkg;
    aotrun_package_info i{};
    i.struct_size = sizeof(i);
    i.name = p.name().c_str();
    i.path = p.path().c_str();
    i.format = p.format();
    i.abi_version = p.abi_version();
    i.device = p.device();
    i.num_inputs = p.inputs().size();
    i.num_outputs = p.outputs().size();
    i.num_constants = p.constant_list().size();
    i.constant_bytes = p.constant_bytes();
    i.num_symbols = package->pkg->code().symbols().size();
    i.hashes_verified = p.hashes_verified() ? 1 : 0;
    i.open_ns = p.timings().open_ns;
    i.verify_ns = p.timings().verify_ns;
    i.dlopen_ns = p.timings().dlopen_ns;
    i.weights_ns = p.timings().weights_ns;
    i.metadata_ns = p.timings().metadata_ns;
    copy_out(i, info);
  });
}

aotrun_status* aotrun_package_get_input(const aotrun_package* package, size_t index, aotrun_tensor_info* info) {
  return guarded([&] {
    require(package, "package");
    require(info, "info");
    fill_tensor(tensor_at(package->pkg->inputs(), index, "input"), info);
  });
}

aotrun_status* aotrun_package_get_output(const aotrun_package* package, size_t index, aotrun_tensor_info* info) {
  return guarded([&] {
    require(package, "package");
    require(info, "info");
    fill_tensor(tensor_at(package->pkg->outputs(), index, "output"), info);
  });
}

aotrun_status* aotrun_package_get_input_model_name(const aotrun_package* package, size_t index, const char** name) {
  return guarded([&] {
    require(package, "package");
    require(name, "name");
    *name = own_name(tensor_at(package->pkg->inputs(), index, "input"));
  });
}

aotrun_status* aotrun_package_get_output_model_name(const aotrun_package* package, size_t index, const char** name) {
  return guarded([&] {
    require(package, "package");
    require(name, "name");
    *name = own_name(tensor_at(package->pkg->outputs(), index, "output"));
  });
}

aotrun_status* aotrun_package_get_symbol(const aotrun_package* package, size_t index, aotrun_symbol_info* info) {
  return guarded([&] {
    require(package, "package");
    require(info, "info");
    const auto& symbols = package->pkg->code().symbols();
    if (index >= symbols.size()) {
      fail(Code::InvalidArgument,
           "symbol index " + std::to_string(index) + " out of range (" + std::to_string(symbols.size()) + " symbols)");
    }
    const auto& spec = symbols[index];
    aotrun_symbol_info s{};
    s.struct_size = sizeof(s);
    s.name = spec.name.c_str();
    s.required = spec.required ? 1 : 0;
    // Exported, even when ignored for being newer than the package's ABI:
    // the mode reasons say why such a symbol is not used.
    s.found = spec.found ? 1 : 0;
    s.since = spec.since;
    copy_out(s, info);
  });
}

aotrun_status* aotrun_package_get_provider(const aotrun_package* package, const char** provider, const char** reason) {
  return guarded([&] {
    require(package, "package");
    const aotrun::PackageCodeInfo& info = package->pkg->code().info();
    if (provider != nullptr) *provider = info.provider.c_str();
    if (reason != nullptr) *reason = info.provider_reason.c_str();
  });
}

int aotrun_package_mode_available(const aotrun_package* package, aotrun_mode mode, const char** reason) {
  const int32_t v = aotrun::capi::enum_value(mode);
  if (package == nullptr || v < AOTRUN_MODE_THREADED || v > AOTRUN_MODE_GRAPH) {
    if (reason != nullptr) *reason = package == nullptr ? "package is NULL" : "unknown mode";
    return 0;
  }
  const auto m = static_cast<aotrun::RunMode>(v);
  const std::string& why = package->pkg->mode_reason(m);
  if (reason != nullptr) *reason = why.c_str();
  return why.empty() ? 1 : 0;
}

aotrun_status* aotrun_package_get_constant(const aotrun_package* package, size_t index, aotrun_constant_info* info) {
  return guarded([&] {
    require(package, "package");
    require(info, "info");
    const auto& list = package->pkg->constant_list();
    if (index >= list.size()) {
      fail(Code::InvalidArgument, "constant index " + std::to_string(index) + " out of range (package '" +
                                      package->pkg->name() + "' has " + std::to_string(list.size()) + ")");
    }
    const aotrun::ConstantInfo& c = list[index];
    aotrun_constant_info i{};
    i.struct_size = sizeof(i);
    i.name = c.name.c_str();
    i.original_name = c.original_name.c_str();
    i.dtype = c.dtype;
    i.ndim = c.shape_known ? static_cast<int32_t>(c.shape.size()) : -1;
    i.shape = c.shape_known ? c.shape.data() : nullptr;
    i.nbytes = c.nbytes;
    i.folded = c.folded ? 1 : 0;
    copy_out(i, info);
  });
}

}  // extern "C"
