#include "package/pt2/provider/torch_runtime.hpp"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <vector>

#include "base/log.hpp"
#include "base/error.hpp"
#include "base/strings.hpp"

namespace aotrun::pt2 {
namespace {

std::mutex g_mu;
std::unique_ptr<TorchShim> g_shim;      // guarded by g_mu; never reset
std::optional<ProviderInUse> g_in_use;  // what g_shim came from, guarded by g_mu

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
    // Interleaved (real, imaginary) float32 / float64 pairs on both sides.
    {"complex64", {kDLComplex, 64, 1}},
    {"complex128", {kDLComplex, 128, 1}},
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
    for (const auto& l : libs) has_cpu |= ends_with(l, "libtorch_cpu.so");
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

namespace {

// `file` two directories above the stand-ins (where they find the shim), as
// a real path; "" when there are no stand-ins or no such file.
std::string beside_standins(const char* file) {
  const std::string dir = bundled_shim_dir();
  if (dir.empty()) return "";
  char real[PATH_MAX];
  const std::string lib = dir + "/../../" + file;
  return ::realpath(lib.c_str(), real) != nullptr ? std::string(real) : "";
}

}  // namespace

std::string bundled_shim_library() { return beside_standins("libaotrun_shim.so.1"); }

std::string shim_error(const TorchShim& shim) {
  const char* e = shim.last_error != nullptr ? shim.last_error() : nullptr;
  return e != nullptr && *e != '\0' ? std::string(": ") + e : std::string();
}

std::string bundled_shim_cuda_library() { return beside_standins("libaotrun_shim_cuda.so.1"); }

const char* provider_name(Provider p) { return p == Provider::Shim ? "shim" : "libtorch"; }

namespace {

// The file that defines `fn`, "" when unknown.
std::string file_of(const void* fn) {
  Dl_info info{};
  if (fn == nullptr || ::dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

// aotrun's shim, whether its stand-ins were found beside libaotrun or named
// by path: the shim functions live in libaotrun_shim.so.1.
bool is_aotrun_shim(const std::string& file) {
  const size_t slash = file.rfind('/');
  return file.compare(slash == std::string::npos ? 0 : slash + 1, std::string::npos, "libaotrun_shim.so.1") == 0;
}

// A provider loaded by someone else (a Python host's libtorch): an object
// with soname libtorch_cpu.so, or the shim's functions in the global scope.
void* host_scope(std::optional<ProviderInUse>* found) {
  void* scope = ::dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);
  void* probe = ::dlsym(scope != nullptr ? scope : RTLD_DEFAULT, kProbe);
  if (probe == nullptr) {
    if (scope != nullptr) ::dlclose(scope);
    return nullptr;
  }
  const std::string file = file_of(probe);
  *found = ProviderInUse{is_aotrun_shim(file) ? Provider::Shim : Provider::Libtorch,
                         file.empty() ? "already loaded in this process" : file, true};
  return scope != nullptr ? scope : RTLD_DEFAULT;  // kept open: never unloaded, like ours
}

std::unique_ptr<TorchShim> resolve_shim(void* scope, const std::string& source) {
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
  s->copy = reinterpret_cast<TorchShim::Copy>(::dlsym(scope, "aoti_torch_copy_"));
  s->empty_strided = reinterpret_cast<TorchShim::EmptyStrided>(::dlsym(scope, "aoti_torch_empty_strided"));
  s->last_error = reinterpret_cast<TorchShim::LastError>(::dlsym(scope, "aotrun_shim_last_error"));
  s->set_last_error = reinterpret_cast<TorchShim::SetLastError>(::dlsym(scope, "aotrun_shim_set_last_error"));
  s->proxy_executor_create =
      reinterpret_cast<TorchShim::ProxyCreate>(::dlsym(scope, "aotrun_shim_proxy_executor_create"));
  s->proxy_executor_delete =
      reinterpret_cast<TorchShim::ProxyDelete>(::dlsym(scope, "aotrun_shim_proxy_executor_delete"));
  s->declare_constant = reinterpret_cast<TorchShim::DeclareConstant>(::dlsym(scope, "aotrun_shim_declare_constant"));
  s->set_blob_hook = reinterpret_cast<TorchShim::SetBlobHook>(::dlsym(scope, "aotrun_shim_set_blob_hook"));
  s->set_constant_slides =
      reinterpret_cast<TorchShim::SetConstantSlides>(::dlsym(scope, "aotrun_shim_set_constant_slides"));
  if (auto cuda = reinterpret_cast<TorchShim::Constant>(::dlsym(scope, "aoti_torch_device_type_cuda"))) {
    s->device_type_cuda = cuda();
  }
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
  return s;
}

// Loads what `pick` names; g_mu held, nothing loaded yet.
void load_picked(const ProviderPick& pick, const std::optional<ProviderInUse>& host, void* host_handle) {
  void* scope = host_handle;
  ProviderInUse in_use{pick.kind, "", false};
  if (host) {
    in_use = *host;
  } else if (pick.kind == Provider::Shim) {
    const std::string dir = bundled_shim_dir();
    if (dir.empty()) {
      fail(Code::LoadFailed,
           "aotrun's own shim was asked for, but this libaotrun has no aotrun/torch-standins "
           "beside it (built without AOTRUN_BUILD_SHIM, or installed without it)");
    }
    scope = load_libtorch(dir);
    in_use.source = dir;
  } else {
    if (pick.libtorch.empty()) fail(Code::LoadFailed, "no libtorch to load (internal: the policy picked none)");
    scope = load_libtorch(pick.libtorch);
    in_use.source = pick.libtorch;
  }
  auto s = resolve_shim(scope, in_use.source);
  // What serves is what the functions came from: a path may hold the stand-ins.
  in_use.kind =
      is_aotrun_shim(file_of(reinterpret_cast<void*>(s->delete_tensor_object))) ? Provider::Shim : Provider::Libtorch;
  g_shim = std::move(s);
  g_in_use = in_use;
  log(LogLevel::Debug, std::string("C shim provider: ") + provider_name(in_use.kind) + " (" + in_use.source + ")");
}

}  // namespace

std::optional<ProviderInUse> provider_in_use() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_in_use) return g_in_use;
  std::optional<ProviderInUse> host;
  void* scope = host_scope(&host);
  if (scope != nullptr && scope != RTLD_DEFAULT) ::dlclose(scope);  // a look only: the reference goes back
  return host;
}

ServingLibrary serving_library(Provider kind, const std::string& source) {
  if (source.empty()) return {kind, kind == Provider::Shim ? bundled_shim_library() : ""};
  const std::string file = is_dir(source) ? source + "/libtorch_cpu.so" : source;
  if (is_aotrun_shim(file)) return {Provider::Shim, file};
  // Stand-ins (named as a libtorch, or found beside libaotrun) NEED the shim
  // library two directories up, which defines what they serve.
  const size_t slash = file.rfind('/');
  const std::string shim =
      (slash == std::string::npos ? std::string(".") : file.substr(0, slash)) + "/../../libaotrun_shim.so.1";
  struct stat st {};
  char real[PATH_MAX];
  if (::stat(shim.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::realpath(shim.c_str(), real) != nullptr) {
    return {Provider::Shim, real};
  }
  return {kind, ::stat(file.c_str(), &st) == 0 ? file : ""};
}

SettledProvider settle_provider(const std::function<ProviderPick(const std::optional<ProviderInUse>&)>& decide) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::optional<ProviderInUse> host;
  void* host_handle = nullptr;
  if (!g_in_use) host_handle = host_scope(&host);
  const ProviderPick pick = decide(g_in_use ? g_in_use : host);
  if (!g_shim) {
    load_picked(pick, host, host_handle);
  } else if (pick.kind == Provider::Libtorch && !pick.libtorch.empty() && pick.libtorch != g_in_use->source) {
    log(LogLevel::Debug, "libtorch already loaded from " + g_in_use->source + "; ignoring '" + pick.libtorch + "'");
  }
  return {g_shim.get(), *g_in_use};
}

namespace {

CudaShim load_cuda_stand_ins() {
  const std::string dir = bundled_shim_dir();
  if (dir.empty() || bundled_shim_cuda_library().empty()) {
    fail(Code::LoadFailed,
         "aotrun's shim has no CUDA layer here (libaotrun_shim_cuda.so.1 beside libaotrun: "
         "aotrun must be built with its CUDA backend, AOTRUN_ENABLE_CUDA)");
  }
  void* scope = nullptr;
  for (const char* f : {"libc10_cuda.so", "libtorch_cuda.so"}) {
    const std::string p = dir + "/" + f;
    scope = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed, like the CPU stand-ins
    if (scope == nullptr) fail(Code::LoadFailed, "cannot load aotrun's CUDA shim from '" + p + "': " + dl_error());
  }
  CudaShim c;
  std::vector<std::string> missing;
  resolve(scope, "aoti_torch_create_cuda_stream_guard", &c.create_stream_guard, &missing);
  resolve(scope, "aoti_torch_delete_cuda_stream_guard", &c.delete_stream_guard, &missing);
  resolve(scope, "aotrun_shim_cuda_pool_create", &c.pool_create, &missing);
  resolve(scope, "aotrun_shim_cuda_pool_destroy", &c.pool_destroy, &missing);
  resolve(scope, "aotrun_shim_cuda_pool_use", &c.pool_use, &missing);
  resolve(scope, "aotrun_shim_cuda_read_to_host", &c.read_to_host, &missing);
  if (!missing.empty()) fail(Code::MissingSymbol, "aotrun's CUDA shim lacks " + missing.front());
  return c;
}

}  // namespace

const CudaShim& load_cuda_shim() {
  // Once per process; a failed load throws and is tried again by the next package.
  static const CudaShim loaded = load_cuda_stand_ins();
  return loaded;
}

const TorchShim& torch_shim(const std::string& hint) {
  std::string where = hint;
  if (where.empty()) {
    const char* env = std::getenv("AOTRUN_LIBTORCH");
    if (env != nullptr) where = env;
  }
  return *settle_provider([&](const std::optional<ProviderInUse>& in_use) {
            if (in_use) return ProviderPick{in_use->kind, ""};
            if (where.empty()) {
              fail(Code::LoadFailed,
                   "no C shim provider: set AOTRUN_LIBTORCH to libtorch_cpu.so or the directory holding it "
                   "(scripts/fetch-libtorch.sh downloads one), or to 'shim' for aotrun's own shim");
            }
            return where == kAotrunShim ? ProviderPick{Provider::Shim, ""} : ProviderPick{Provider::Libtorch, where};
          }).shim;
}

}  // namespace aotrun::pt2
