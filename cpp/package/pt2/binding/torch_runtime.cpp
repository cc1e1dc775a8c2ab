#include "package/pt2/binding/torch_runtime.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <vector>

#include "base/log.hpp"
#include "base/error.hpp"

namespace aotrun::pt2 {
namespace {

std::mutex g_mu;
std::unique_ptr<TorchShim> g_shim;  // guarded by g_mu; never reset
std::string g_source;               // where it came from, guarded by g_mu

// The dtypes aotrun maps between torch and DLPack, by torch's name.
struct NamedDtype {
  const char* name;
  DLDataType dl;
};
constexpr NamedDtype kDtypes[] = {
    {"float32", {kDLFloat, 32, 1}},
    {"float64", {kDLFloat, 64, 1}},
    {"float16", {kDLFloat, 16, 1}},
    {"bfloat16", {kDLBfloat, 16, 1}},
    {"int8", {kDLInt, 8, 1}},
    {"int16", {kDLInt, 16, 1}},
    {"int32", {kDLInt, 32, 1}},
    {"int64", {kDLInt, 64, 1}},
    {"uint8", {kDLUInt, 8, 1}},
    // kDLBool (code 6, one byte per element) since DLPack 0.8; Debian's
    // dlpack.h (0.6) predates the enumerator, so the code is spelled out.
    {"bool", {static_cast<uint8_t>(6), 8, 1}},
};
static_assert(sizeof kDtypes / sizeof kDtypes[0] <= sizeof(TorchShim::dtypes) / sizeof(TorchShim::DtypePair),
              "TorchShim::dtypes is too small for kDtypes");

constexpr const char* kProbe = "aoti_torch_delete_tensor_object";

template <typename F>
void resolve(void* scope, const char* name, F* out, std::vector<std::string>* missing) {
  *out = reinterpret_cast<F>(::dlsym(scope, name));
  if (*out == nullptr) missing->push_back(name);
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown error";
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Loads libtorch from `where` (libtorch_cpu.so or its directory), RTLD_LOCAL,
// and returns the libtorch_cpu handle. A model finds it anyway: glibc matches
// a DT_NEEDED entry against the sonames of loaded objects, and the model's
// references to the shim resolve within its own dependencies. Kept out of the
// global scope, libtorch's weak template instances (std::regex, ...) cannot
// override a model's own copies, which differ in layout for models built by
// torch 2.6 (pre-C++11 string ABI) and crashed in their constructor on
// libtorch 2.15 when it was loaded RTLD_GLOBAL. In a directory, libc10 and
// libtorch (the wheel's, or fetch-libtorch.sh's stub) are loaded by path too,
// so that the model's DT_NEEDED finds them whatever the search path says.
void* load_libtorch(const std::string& where) {
  std::vector<std::string> libs;
  if (is_dir(where)) {
    for (const char* f : {"libc10.so", "libtorch_cpu.so", "libtorch.so"}) {
      const std::string p = where + "/" + f;
      struct stat st {};
      if (::stat(p.c_str(), &st) == 0) libs.push_back(p);
    }
    bool has_cpu = false;
    for (const auto& l : libs) has_cpu |= l.size() >= 15 && l.compare(l.size() - 15, 15, "libtorch_cpu.so") == 0;
    if (!has_cpu) {
      fail(Code::LoadFailed, "no libtorch_cpu.so in '" + where +
                                 "' (the directory named by the libtorch option or "
                                 "AOTRUN_LIBTORCH must hold libtorch's libraries, e.g. <site-packages>/torch/lib)");
    }
  } else {
    libs.push_back(where);
  }
  void* cpu = nullptr;
  for (const auto& l : libs) {
    void* h = ::dlopen(l.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) fail(Code::LoadFailed, "cannot load libtorch from '" + l + "': " + dl_error());
    if (::dlsym(h, kProbe) != nullptr && cpu == nullptr) cpu = h;
  }
  if (cpu == nullptr) fail(Code::LoadFailed, "'" + where + "' does not export libtorch's C shim (" + kProbe + ")");
  return cpu;
}

}  // namespace

bool dlpack_dtype_named(const std::string& name, DLDataType* out) {
  for (const auto& d : kDtypes) {
    if (name == d.name) {
      *out = d.dl;
      return true;
    }
  }
  return false;
}

int32_t TorchShim::torch_dtype(DLDataType dt) const {
  if (dt.lanes != 1) return -1;
  for (int i = 0; i < num_dtypes; ++i) {
    if (dtypes[i].dl.code == dt.code && dtypes[i].dl.bits == dt.bits) return dtypes[i].torch;
  }
  return -1;
}

bool TorchShim::dlpack_dtype(int32_t torch, DLDataType* out) const {
  for (int i = 0; i < num_dtypes; ++i) {
    if (dtypes[i].torch == torch) {
      *out = dtypes[i].dl;
      return true;
    }
  }
  return false;
}

std::string bundled_shim_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&bundled_shim_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string lib = info.dli_fname;
  const size_t slash = lib.rfind('/');
  const std::string dir =
      (slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) + "/aotrun/torch-standins";
  struct stat st {};
  return ::stat((dir + "/libtorch_cpu.so").c_str(), &st) == 0 ? dir : "";
}

const TorchShim& torch_shim(const std::string& hint) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!g_shim) {
    std::string source;
    // A process that already has libtorch (a Python host) keeps its copy.
    void* scope = ::dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
    if (scope != nullptr || ::dlsym(RTLD_DEFAULT, kProbe) != nullptr) {
      if (scope == nullptr) scope = RTLD_DEFAULT;
      source = "already loaded in this process";
    } else {
      std::string where = hint;
      if (where.empty()) {
        const char* env = std::getenv("AOTRUN_LIBTORCH");
        if (env != nullptr) where = env;
      }
      if (where.empty()) {
        fail(Code::LoadFailed,
             "running a PyTorch .pt2 package needs libtorch's C shim, and no libtorch is loaded: set "
             "AOTRUN_LIBTORCH (or the package option 'libtorch') to libtorch_cpu.so or the directory holding it, "
             "e.g. <site-packages>/torch/lib (scripts/fetch-libtorch.sh downloads one), or to 'shim' for aotrun's "
             "own shim, which needs no libtorch (docs/SHIM.md)");
      }
      if (where == kAotrunShim) {
        const std::string dir = bundled_shim_dir();
        if (dir.empty()) {
          fail(Code::LoadFailed, "aotrun's own shim was asked for ('" + std::string(kAotrunShim) +
                                     "'), but this libaotrun has no aotrun/torch-standins beside it (built "
                                     "without AOTRUN_BUILD_SHIM, or installed without it)");
        }
        scope = load_libtorch(dir);
        source = "aotrun's own shim (" + dir + ")";
      } else {
        scope = load_libtorch(where);
        source = where;
      }
    }
    auto s = std::make_unique<TorchShim>();
    std::vector<std::string> missing;
    // v2 adds layout arguments; the first form is in every release with AOTInductor.
    resolve(scope, "aoti_torch_create_tensor_from_blob", &s->create_tensor_from_blob, &missing);
    resolve(scope, "aoti_torch_delete_tensor_object", &s->delete_tensor_object, &missing);
    resolve(scope, "aoti_torch_get_data_ptr", &s->get_data_ptr, &missing);
    resolve(scope, "aoti_torch_get_sizes", &s->get_sizes, &missing);
    resolve(scope, "aoti_torch_get_strides", &s->get_strides, &missing);
    resolve(scope, "aoti_torch_get_dim", &s->get_dim, &missing);
    resolve(scope, "aoti_torch_get_dtype", &s->get_dtype, &missing);
    s->new_tensor_handle = reinterpret_cast<TorchShim::NewHandle>(::dlsym(scope, "aoti_torch_new_tensor_handle"));
    TorchShim::Constant cpu = nullptr;
    resolve(scope, "aoti_torch_device_type_cpu", &cpu, &missing);
    for (const auto& d : kDtypes) {
      TorchShim::Constant f = nullptr;
      resolve(scope, ("aoti_torch_dtype_" + std::string(d.name)).c_str(), &f, &missing);
      if (f != nullptr) s->dtypes[s->num_dtypes++] = {f(), d.dl};
    }
    if (!missing.empty()) {
      std::string names;
      for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
      fail(Code::MissingSymbol, "libtorch (" + source + ") lacks the AOTInductor C shim functions: " + names +
                                    " (torch 2.6 or newer is needed)");
    }
    s->device_type_cpu = cpu();
    g_source = source;
    g_shim = std::move(s);
    log(LogLevel::Debug, "libtorch C shim resolved (" + source + ")");
  } else if (!hint.empty() && hint != g_source) {
    log(LogLevel::Debug, "libtorch already loaded from " + g_source + "; ignoring '" + hint + "'");
  }
  return *g_shim;
}

}  // namespace aotrun::pt2
