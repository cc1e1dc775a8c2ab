/*
 * aotrun.hpp — C++17 host API of libaotrun.so.1, header-only.
 *
 * Owners and thin methods over the C API of aotrun.h, in the manner of ONNX
 * Runtime's onnxruntime_cxx_api.h. Everything here is inline code that calls
 * the C functions declared in aotrun.h: the header adds no symbol to
 * libaotrun and no ABI of its own, and a program built with it runs against
 * any libaotrun.so.1 that provides the C functions it calls (1.2 for the
 * constants, 1.1 for the pt2 options, 1.0 for the rest). aotrun.h remains the reference for what
 * each call does; the comments below say what the C++ layer adds: who owns
 * what, which calls throw, and what empty objects do.
 *
 * Namespace: aotrun::cxx. The library's own C++ internals and the package
 * SDK (aotrun::sdk) use the namespace aotrun and have types named Package,
 * Runner, Event, Stream; a host type there would clash with them in any
 * program that sees both, so the host API has a namespace of its own.
 *
 * Conventions (they hold for every type and function below unless its
 * comment says otherwise):
 *
 *   Errors are exceptions. A C call that returns a non-NULL aotrun_status*
 *   becomes a thrown aotrun::cxx::Error carrying the status's code and
 *   message (the status is freed first). Why exceptions rather than an
 *   expected<T, Error>-style result:
 *     - the owners acquire their handle in their constructor (RAII), and a
 *       constructor can report failure only by throwing;
 *     - C++17 has no std::expected; a home-made one would be one more
 *       vocabulary type every caller has to learn and convert;
 *     - every failure the C API reports is a real failure of the request
 *       (a bad package, a bad argument, a failed run): unwinding to the
 *       code that decides what to do is what callers want, as in ONNX
 *       Runtime's C++ API;
 *     - the outcomes that are not failures but normal answers — the
 *       in-flight window is full (WOULD_BLOCK from try_run_async), no slot
 *       within the timeout (TIMEOUT from run_async_timeout), the run has not
 *       finished yet (TIMEOUT from event wait_timeout) — are returned as
 *       values (an empty Event, false) and never thrown, so polling loops
 *       need no try/catch;
 *     - code that cannot use exceptions (-fno-exceptions, a hot loop that
 *       must not unwind) calls the C API directly: every owner hands out
 *       its C handle with get().
 *   Functions that cannot fail in the C API are noexcept here. The C++
 *   layer itself may also throw std::bad_alloc (copying a message, growing
 *   a vector).
 *
 *   Owners are move-only. Each class owns one C handle and releases it in
 *   its destructor with the matching *_free / *_close / *_destroy. Moving
 *   transfers the handle and leaves the source empty. An empty object (one
 *   moved from, default-constructed, or built from nullptr) may be
 *   destroyed, assigned to and moved; its methods pass NULL to the C API,
 *   which reports INVALID_ARGUMENT (thrown) where the C function can fail,
 *   and returns the C function's NULL answer (0, false, THREADED) where it
 *   cannot. get() returns the C handle without giving it up, release()
 *   gives it up, reset() releases the current one and adopts another, and
 *   explicit Type(handle*) adopts a handle created through the C API.
 *
 *   Threads: the C API's rules carry over unchanged — each method says
 *   whether its C function is "any thread" or serialised per object.
 *   Moving, assigning and destroying an owner are never concurrent with
 *   other calls on it.
 *
 *   Strings and structs returned by value copy nothing but the C struct:
 *   the `const char*` fields of an aotrun_package_info, aotrun_tensor_info,
 *   aotrun_symbol_info or aotrun_runner_stats stay owned by the package or
 *   runner they came from, as in C.
 *
 *   Tensors are DLPack DLTensor headers over caller memory, passed as
 *   ConstTensorSpan (inputs) and TensorSpan (outputs): non-owning views of
 *   an array of DLTensor, built implicitly from one DLTensor, a
 *   std::vector<DLTensor>, a std::array or a C array.
 *
 * Since: everything in this header is available since 1.1 (it ships with
 * libaotrun 1.1; the C functions it calls are 1.0 unless noted).
 *
 * Example:
 *
 *   namespace ax = aotrun::cxx;
 *   ax::Package package("build/packages/mlp");
 *   ax::Runner runner(package, ax::RunnerOptions().mode(AOTRUN_MODE_GRAPH));
 *   std::vector<float> x(8 * 256), y(8 * 64);
 *   std::vector<int64_t> xs{8, 256}, ys{8, 64};
 *   DLTensor in = ax::tensor_view(x.data(), xs), out = ax::tensor_view(y.data(), ys);
 *   runner.run(in, out);                 // throws ax::Error on failure
 */
#ifndef AOTRUN_AOTRUN_HPP_
#define AOTRUN_AOTRUN_HPP_

#include <aotrun/aotrun.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aotrun {
namespace cxx {

/* ===========================================================================
 * Error
 *
 * The exception every failing call throws: the aotrun_code of the C status
 * and its message, verbatim (what() is the message alone, without the code
 * name; code_name() gives that).
 * ========================================================================= */

class Error : public std::runtime_error {
 public:
  Error(aotrun_code code, const std::string& message) : std::runtime_error(message), code_(code) {}

  /* The C status's code (never AOTRUN_OK). */
  aotrun_code code() const noexcept { return code_; }
  /* aotrun_code_name(code()), e.g. "NOT_FOUND". */
  const char* code_name() const noexcept { return aotrun_code_name(code_); }

 private:
  aotrun_code code_;
};

/* Takes ownership of `status`: returns for NULL, else frees it and throws
 * Error with its code and message. For C calls this header does not wrap
 * (ONNX Runtime's Ort::ThrowOnError). */
inline void throw_on_error(aotrun_status* status) {
  if (status == nullptr) return;
  struct Free {
    void operator()(aotrun_status* s) const noexcept { aotrun_status_free(s); }
  };
  std::unique_ptr<aotrun_status, Free> owned(status);  // freed on every path
  throw Error(aotrun_status_code(status), aotrun_status_message(status));
}

namespace detail {

/* Takes ownership of `status`: false for NULL, true (status freed) when its
 * code is `expected`, else throws Error. Turns an expected outcome of a call
 * (WOULD_BLOCK, TIMEOUT) into a value. */
inline bool status_is(aotrun_status* status, aotrun_code expected) {
  if (status == nullptr) return false;
  if (aotrun_status_code(status) != expected) throw_on_error(status);
  aotrun_status_free(status);
  return true;
}

/* The owner every handle class derives from: one C handle, released with
 * Free (which accepts NULL), move-only. */
template <typename T, void (*Free)(T*)>
class Handle {
 public:
  using handle_type = T;

  Handle() noexcept = default;
  Handle(std::nullptr_t) noexcept {}
  /* Adopts `owned` (may be NULL). */
  explicit Handle(T* owned) noexcept : handle_(owned) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : handle_(other.release()) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~Handle() { Free(handle_); }

  /* The C handle, still owned by this object (NULL when empty). */
  T* get() const noexcept { return handle_; }
  /* Gives the C handle up: the caller frees it; this object becomes empty. */
  T* release() noexcept {
    T* h = handle_;
    handle_ = nullptr;
    return h;
  }
  /* Releases the current handle, then owns `owned` (may be NULL). */
  void reset(T* owned = nullptr) noexcept {
    T* old = handle_;
    handle_ = owned;
    Free(old);
  }
  /* True unless empty. */
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  T* handle_ = nullptr;
};

}  // namespace detail

/* ===========================================================================
 * Library-wide functions
 *
 * Versions, names and the process-wide log settings (aotrun.h: Versions,
 * Status, Logging). Any thread.
 * ========================================================================= */

/* Version of the library actually loaded (AOTRUN_MAKE_VERSION encoding);
 * compare with AOTRUN_VERSION to detect header/library skew. */
inline uint32_t version() noexcept { return aotrun_version(); }
/* The same as a static string, e.g. "1.1.0". */
inline const char* version_string() noexcept { return aotrun_version_string(); }
/* Stable name of a code ("INVALID_ARGUMENT"), "UNKNOWN" for others. */
inline const char* code_name(aotrun_code code) noexcept { return aotrun_code_name(code); }
/* "threaded", "single_threaded", "graph"; "unknown" else. */
inline const char* mode_name(aotrun_mode mode) noexcept { return aotrun_mode_name(mode); }

/* Installs the process-wide log callback (NULL restores stderr); see
 * aotrun_set_log_callback for when the previous one stops being called.
 * `fn` must not throw; `user_data` must outlive the installation. */
inline void set_log_callback(aotrun_log_fn fn, void* user_data) noexcept { aotrun_set_log_callback(fn, user_data); }
/* Most verbose level emitted (AOTRUN_LOG_OFF: none). */
inline void set_log_level(aotrun_log_level level) noexcept { aotrun_set_log_level(level); }
inline aotrun_log_level log_level() noexcept { return aotrun_get_log_level(); }

/* ===========================================================================
 * Tensor views
 *
 * Non-owning: a DLTensor header and the spans below point at caller memory
 * (data and shape) and must not outlive it. For asynchronous runs the data
 * must stay alive until the event completes; the headers and shapes are
 * copied by the library at submission (aotrun.h, Asynchronous runs).
 * ========================================================================= */

/* DLPack type of a C++ element type: float, double, int8..int64,
 * uint8..uint64. */
template <typename T>
constexpr DLDataType dtype_of() noexcept {
  static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value,
                "dtype_of: float, double or a fixed-width integer type");
  return DLDataType{static_cast<uint8_t>(std::is_floating_point<T>::value ? kDLFloat
                                         : std::is_signed<T>::value       ? kDLInt
                                                                          : kDLUInt),
                    static_cast<uint8_t>(8 * sizeof(T)), 1};
}

/* A compact row-major DLTensor over `data` with `ndim` dimensions `shape`
 * (not copied: it must outlive the tensor) on `device` (default CPU 0). */
inline DLTensor tensor_view(void* data, DLDataType dtype, int64_t* shape, int32_t ndim,
                            DLDevice device = DLDevice{kDLCPU, 0}) noexcept {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

/* The same with the dtype of T and the shape in a vector that must outlive
 * the tensor (a non-const reference, so a temporary cannot bind). */
template <typename T>
DLTensor tensor_view(T* data, std::vector<int64_t>& shape, DLDevice device = DLDevice{kDLCPU, 0}) noexcept {
  return tensor_view(static_cast<void*>(data), dtype_of<T>(), shape.data(), static_cast<int32_t>(shape.size()), device);
}

/* For inputs over const data: DLTensor has no const variant, and the library
 * only reads input tensors. Do not pass the result as an output. */
template <typename T>
DLTensor tensor_view(const T* data, std::vector<int64_t>& shape, DLDevice device = DLDevice{kDLCPU, 0}) noexcept {
  return tensor_view(const_cast<T*>(data), shape, device);
}

/* A view of `size` mutable DLTensor headers (outputs). */
class TensorSpan {
 public:
  TensorSpan() noexcept = default;
  TensorSpan(DLTensor* data, size_t size) noexcept : data_(data), size_(size) {}
  TensorSpan(DLTensor& one) noexcept : data_(&one), size_(1) {}
  TensorSpan(std::vector<DLTensor>& v) noexcept : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  TensorSpan(std::array<DLTensor, N>& a) noexcept : data_(a.data()), size_(N) {}
  template <size_t N>
  TensorSpan(DLTensor (&a)[N]) noexcept : data_(a), size_(N) {}

  DLTensor* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  DLTensor& operator[](size_t i) const noexcept { return data_[i]; }
  DLTensor* begin() const noexcept { return data_; }
  DLTensor* end() const noexcept { return data_ + size_; }

 private:
  DLTensor* data_ = nullptr;
  size_t size_ = 0;
};

/* A view of `size` read-only DLTensor headers (inputs). */
class ConstTensorSpan {
 public:
  ConstTensorSpan() noexcept = default;
  ConstTensorSpan(const DLTensor* data, size_t size) noexcept : data_(data), size_(size) {}
  ConstTensorSpan(const DLTensor& one) noexcept : data_(&one), size_(1) {}
  ConstTensorSpan(const std::vector<DLTensor>& v) noexcept : data_(v.data()), size_(v.size()) {}
  template <size_t N>
  ConstTensorSpan(const std::array<DLTensor, N>& a) noexcept : data_(a.data()), size_(N) {}
  template <size_t N>
  ConstTensorSpan(const DLTensor (&a)[N]) noexcept : data_(a), size_(N) {}
  ConstTensorSpan(TensorSpan s) noexcept : data_(s.data()), size_(s.size()) {}

  const DLTensor* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  const DLTensor& operator[](size_t i) const noexcept { return data_[i]; }
  const DLTensor* begin() const noexcept { return data_; }
  const DLTensor* end() const noexcept { return data_ + size_; }

 private:
  const DLTensor* data_ = nullptr;
  size_t size_ = 0;
};

/* ===========================================================================
 * ManagedTensor
 *
 * Owns one DLManagedTensor (an output of Runner::run_alloc) and calls its
 * deleter on destruction. Move-only; empty after a move. Not thread-safe
 * (one owner); the tensor's data may be read from any thread.
 * ========================================================================= */

class ManagedTensor {
 public:
  ManagedTensor() noexcept = default;
  ManagedTensor(std::nullptr_t) noexcept {}
  /* Adopts `owned` (may be NULL). */
  explicit ManagedTensor(DLManagedTensor* owned) noexcept : tensor_(owned) {}
  ManagedTensor(const ManagedTensor&) = delete;
  ManagedTensor& operator=(const ManagedTensor&) = delete;
  ManagedTensor(ManagedTensor&& other) noexcept : tensor_(other.release()) {}
  ManagedTensor& operator=(ManagedTensor&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~ManagedTensor() { reset(); }

  DLManagedTensor* get() const noexcept { return tensor_; }
  /* Gives the tensor up: the caller calls its deleter. */
  DLManagedTensor* release() noexcept {
    DLManagedTensor* t = tensor_;
    tensor_ = nullptr;
    return t;
  }
  /* Calls the deleter of the current tensor, then owns `owned`. */
  void reset(DLManagedTensor* owned = nullptr) noexcept {
    DLManagedTensor* old = tensor_;
    tensor_ = owned;
    if (old != nullptr && old->deleter != nullptr) old->deleter(old);
  }
  explicit operator bool() const noexcept { return tensor_ != nullptr; }

  /* The tensor header. Not on an empty object. */
  const DLTensor& dl() const noexcept { return tensor_->dl_tensor; }
  /* Elements: the product of the shape (1 for a scalar). Not on an empty
   * object. */
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int32_t i = 0; i < dl().ndim; ++i) n *= dl().shape[i];
    return n;
  }
  /* The first element (data + byte_offset) as T. Not on an empty object;
   * T is not checked against dl().dtype. */
  template <typename T>
  T* data() const noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(dl().data) + dl().byte_offset);
  }

 private:
  DLManagedTensor* tensor_ = nullptr;
};

/* ===========================================================================
 * PackageOptions
 *
 * Owns an aotrun_package_options. The default constructor creates one with
 * the library's defaults; setters return *this so that they chain:
 *   Package p(path, PackageOptions().verify_hashes(false));
 * Serialised per object (like the C object). Errors: see each setter;
 * OUT_OF_MEMORY from creation.
 * ========================================================================= */

class PackageOptions : public detail::Handle<aotrun_package_options, aotrun_package_options_free> {
 public:
  using Handle::Handle;
  PackageOptions() {
    aotrun_package_options* o = nullptr;
    throw_on_error(aotrun_package_options_create(&o));
    reset(o);
  }

  /* Check each file's manifest sha256 before loading it (default true). */
  PackageOptions& verify_hashes(bool verify) {
    throw_on_error(aotrun_package_options_set_verify_hashes(get(), verify ? 1 : 0));
    return *this;
  }
  /* Pins the package's identity (64 hex digits); nullptr clears the pin.
   * Throws INVALID_ARGUMENT for anything but 64 hex digits. */
  PackageOptions& expected_sha256(const char* sha256_hex) {
    throw_on_error(aotrun_package_options_set_expected_sha256(get(), sha256_hex));
    return *this;
  }
  PackageOptions& expected_sha256(const std::string& sha256_hex) { return expected_sha256(sha256_hex.c_str()); }
  /* Accept group/world-writable or foreign-owned package files (default
   * false). */
  PackageOptions& allow_untrusted_files(bool allow) {
    throw_on_error(aotrun_package_options_set_allow_untrusted_files(get(), allow ? 1 : 0));
    return *this;
  }
  /* .pt2 archives: which model to open (default "model"); nullptr restores
   * the default. Throws INVALID_ARGUMENT (empty, contains '/'). C API 1.1. */
  PackageOptions& pt2_model(const char* name) {
    throw_on_error(aotrun_package_options_set_pt2_model(get(), name));
    return *this;
  }
  PackageOptions& pt2_model(const std::string& name) { return pt2_model(name.c_str()); }
  /* .pt2 archives: libtorch_cpu.so or its directory; nullptr restores the
   * default. Throws INVALID_ARGUMENT (empty). C API 1.1. */
  PackageOptions& libtorch(const char* path) {
    throw_on_error(aotrun_package_options_set_libtorch(get(), path));
    return *this;
  }
  PackageOptions& libtorch(const std::string& path) { return libtorch(path.c_str()); }
  /* .pt2 archives: the C shim provider, "auto", "shim" or "libtorch";
   * nullptr restores the default. Throws INVALID_ARGUMENT. C API 1.3. */
  PackageOptions& provider(const char* name) {
    throw_on_error(aotrun_package_options_set_provider(get(), name));
    return *this;
  }
  PackageOptions& provider(const std::string& name) { return provider(name.c_str()); }
  /* .pt2 archives: sizes above a dynamic dim's compiled maximum run, on the
   * caller's word that the model computes right there
   * (aotrun_package_options_set_pt2_above_compiled_max). C API 1.3. */
  PackageOptions& pt2_above_compiled_max(bool allow) {
    throw_on_error(aotrun_package_options_set_pt2_above_compiled_max(get(), allow ? 1 : 0));
    return *this;
  }
  /* .pt2 archives: dim 0 of every input is a batch of independent rows;
   * requests below the compiled minimum batch run padded. C API 1.3. */
  PackageOptions& pt2_pad_batch(bool pad) {
    throw_on_error(aotrun_package_options_set_pt2_pad_batch(get(), pad ? 1 : 0));
    return *this;
  }
};

/* Which C shim provider serves a package, and why (both "" for a package
 * that calls none). C API 1.3. */
struct ProviderInfo {
  std::string name;
  std::string reason;
};

/* Which C shim provider opening a package would choose, the library its
 * model would bind to, and why, or the refusal open would give (name ""),
 * asked without opening it (aotrun_package_preview_provider). C API 1.3. */
struct ProviderPreview {
  std::string name;
  std::string library;
  std::string reason;
};

/* ===========================================================================
 * Package
 *
 * Owns an opened aotrun_package (the caller's reference: runners created
 * from it keep it loaded, so the Package may be destroyed before them).
 * Queries are "any thread"; destruction must not overlap other calls on the
 * same package.
 * ========================================================================= */

class Package : public detail::Handle<aotrun_package, aotrun_package_close> {
 public:
  using Handle::Handle;
  /* Empty. */
  Package() noexcept = default;

  /* Opens the package at `path` with default options, or with `options`
   * (not retained). Throws the errors of aotrun_package_open: NOT_FOUND,
   * LOAD_FAILED, ABI_MISMATCH, MISSING_SYMBOL, INTEGRITY, BAD_PACKAGE,
   * PACKAGE, INVALID_ARGUMENT. */
  explicit Package(const std::string& path) { open(path, nullptr); }
  Package(const std::string& path, const PackageOptions& options) { open(path, options.get()); }

  /* Name, path, format, ABI version, device, counts and load timings. The
   * strings are owned by the package. */
  aotrun_package_info info() const {
    aotrun_package_info i{};
    i.struct_size = sizeof(i);
    throw_on_error(aotrun_package_get_info(get(), &i));
    return i;
  }
  /* Input / output `index` (< info().num_inputs / num_outputs); the name and
   * shape are owned by the package. Throws INVALID_ARGUMENT (out of range). */
  aotrun_tensor_info input(size_t index) const {
    aotrun_tensor_info t{};
    t.struct_size = sizeof(t);
    throw_on_error(aotrun_package_get_input(get(), index, &t));
    return t;
  }
  aotrun_tensor_info output(size_t index) const {
    aotrun_tensor_info t{};
    t.struct_size = sizeof(t);
    throw_on_error(aotrun_package_get_output(get(), index, &t));
    return t;
  }
  /* Every input / output, in order. */
  std::vector<aotrun_tensor_info> inputs() const {
    std::vector<aotrun_tensor_info> all;
    for (size_t i = 0, n = info().num_inputs; i < n; ++i) all.push_back(input(i));
    return all;
  }
  std::vector<aotrun_tensor_info> outputs() const {
    std::vector<aotrun_tensor_info> all;
    for (size_t i = 0, n = info().num_outputs; i < n; ++i) all.push_back(output(i));
    return all;
  }
  /* Entry point `index` (< info().num_symbols) the loader looked for, and
   * all of them. Names are owned by the package. */
  aotrun_symbol_info symbol(size_t index) const {
    aotrun_symbol_info s{};
    s.struct_size = sizeof(s);
    throw_on_error(aotrun_package_get_symbol(get(), index, &s));
    return s;
  }
  std::vector<aotrun_symbol_info> symbols() const {
    std::vector<aotrun_symbol_info> all;
    for (size_t i = 0, n = info().num_symbols; i < n; ++i) all.push_back(symbol(i));
    return all;
  }
  /* True if `mode` runs natively, false if it would fall back (or is
   * unknown). With `reason`, *reason receives why not ("" when available),
   * owned by the package. */
  bool mode_available(aotrun_mode mode, const char** reason = nullptr) const noexcept {
    return aotrun_package_mode_available(get(), mode, reason) != 0;
  }
  /* The model's own name for input / output `index`: its keyword argument
   * or output key, else the tensor's name (aotrun_package_get_input_model_name).
   * Since 1.3. */
  std::string input_model_name(size_t index) const {
    const char* name = nullptr;
    throw_on_error(aotrun_package_get_input_model_name(get(), index, &name));
    return name != nullptr ? name : "";
  }
  std::string output_model_name(size_t index) const {
    const char* name = nullptr;
    throw_on_error(aotrun_package_get_output_model_name(get(), index, &name));
    return name != nullptr ? name : "";
  }
  /* Which C shim provider opening `path` with `options` (or the defaults)
   * would choose now, loading nothing (aotrun_package_preview_provider).
   * Throws what aotrun_package_open throws for a path it cannot read as a
   * package. Since 1.3. */
  static ProviderPreview preview_provider(const std::string& path, PackageOptions& options) {
    const char* name = nullptr;
    const char* library = nullptr;
    const char* reason = nullptr;
    throw_on_error(aotrun_package_preview_provider(path.c_str(), options.get(), &name, &library, &reason));
    return {name != nullptr ? name : "", library != nullptr ? library : "", reason != nullptr ? reason : ""};
  }
  static ProviderPreview preview_provider(const std::string& path) {
    PackageOptions options;
    return preview_provider(path, options);
  }
  /* Which C shim provider serves it and why. Since 1.3. */
  ProviderInfo provider() const {
    const char* name = nullptr;
    const char* reason = nullptr;
    throw_on_error(aotrun_package_get_provider(get(), &name, &reason));
    return {name != nullptr ? name : "", reason != nullptr ? reason : ""};
  }
  /* Constant `index` (< info().num_constants), and all of them; strings and
   * shapes are owned by the package. Since 1.2. */
  aotrun_constant_info constant(size_t index) const {
    aotrun_constant_info c{};
    c.struct_size = sizeof(c);
    throw_on_error(aotrun_package_get_constant(get(), index, &c));
    return c;
  }
  std::vector<aotrun_constant_info> constants() const {
    std::vector<aotrun_constant_info> all;
    for (size_t i = 0, n = info().num_constants; i < n; ++i) all.push_back(constant(i));
    return all;
  }

 private:
  void open(const std::string& path, const aotrun_package_options* options) {
    aotrun_package* p = nullptr;
    throw_on_error(aotrun_package_open(path.c_str(), options, &p));
    reset(p);
  }
};

/* ===========================================================================
 * RunnerOptions
 *
 * Owns an aotrun_runner_options. The default constructor creates one with
 * the library's defaults; setters chain:
 *   Runner r(package, RunnerOptions().mode(AOTRUN_MODE_GRAPH).num_models(2));
 * Serialised per object. Each setter throws INVALID_ARGUMENT for a value
 * out of the range aotrun.h gives.
 * ========================================================================= */

class RunnerOptions : public detail::Handle<aotrun_runner_options, aotrun_runner_options_free> {
 public:
  using Handle::Handle;
  RunnerOptions() {
    aotrun_runner_options* o = nullptr;
    throw_on_error(aotrun_runner_options_create(&o));
    reset(o);
  }

  /* Default AOTRUN_MODE_THREADED. */
  RunnerOptions& mode(aotrun_mode mode) {
    throw_on_error(aotrun_runner_options_set_mode(get(), mode));
    return *this;
  }
  /* Model instances, 1..1024 (default 1). */
  RunnerOptions& num_models(int32_t num_models) {
    throw_on_error(aotrun_runner_options_set_num_models(get(), num_models));
    return *this;
  }
  /* true: a mode the package cannot run natively fails runner creation with
   * UNSUPPORTED instead of falling back (default false). */
  RunnerOptions& strict(bool strict) {
    throw_on_error(aotrun_runner_options_set_strict(get(), strict ? 1 : 0));
    return *this;
  }
  /* Device to run on (default: the package's). */
  RunnerOptions& device(DLDevice device) {
    throw_on_error(aotrun_runner_options_set_device(get(), device));
    return *this;
  }
  /* Graph mode: eager runs before a shape set is captured (0..1000,
   * default 1). */
  RunnerOptions& graph_warmup_runs(int32_t runs) {
    throw_on_error(aotrun_runner_options_set_graph_warmup_runs(get(), runs));
    return *this;
  }
  /* Graph mode: most shape sets kept captured (1..4096, default 16). */
  RunnerOptions& graph_cache_limit(int32_t limit) {
    throw_on_error(aotrun_runner_options_set_graph_cache_limit(get(), limit));
    return *this;
  }
  /* Graph mode: capture only the shape sets added below (default false). */
  RunnerOptions& graph_frozen(bool frozen) {
    throw_on_error(aotrun_runner_options_set_graph_frozen(get(), frozen ? 1 : 0));
    return *this;
  }
  /* Graph mode: one input-shape set to capture at creation, as in C
   * (`ndims[i]` dims of input i, concatenated in `dims`; copied). */
  RunnerOptions& add_capture_shapes(const int32_t* ndims, size_t num_inputs, const int64_t* dims) {
    throw_on_error(aotrun_runner_options_add_capture_shapes(get(), ndims, num_inputs, dims));
    return *this;
  }
  /* The same with one shape per input, e.g. {{8, 256}}. */
  RunnerOptions& add_capture_shapes(const std::vector<std::vector<int64_t>>& shapes) {
    std::vector<int32_t> ndims;
    std::vector<int64_t> dims;
    for (const std::vector<int64_t>& s : shapes) {
      ndims.push_back(static_cast<int32_t>(s.size()));
      dims.insert(dims.end(), s.begin(), s.end());
    }
    return add_capture_shapes(ndims.data(), ndims.size(), dims.data());
  }
  /* Asynchronous runs queued or executing at once (1..65536). */
  RunnerOptions& max_inflight(int32_t max_inflight) {
    throw_on_error(aotrun_runner_options_set_max_inflight(get(), max_inflight));
    return *this;
  }
};

/* ===========================================================================
 * Graph
 *
 * Owns an aotrun_graph recorded by Stream::end_capture. Work already
 * enqueued keeps the graph alive, so it may be destroyed right after
 * launch. Serialised per object.
 * ========================================================================= */

class Stream;

class Graph : public detail::Handle<aotrun_graph, aotrun_graph_free> {
 public:
  using Handle::Handle;

  /* Replays the graph on `stream` (inline: before returning; worker:
   * enqueued). Throws CAPTURE_UNSUPPORTED (stream capturing), PACKAGE
   * (recorded work failed, inline streams). */
  inline void launch(Stream& stream);
  /* Number of recorded operations (0 when empty). */
  size_t num_nodes() const noexcept { return aotrun_graph_num_nodes(get()); }
};

/* ===========================================================================
 * Stream
 *
 * Owns an aotrun_stream, a CPU stream with CUDA's capture rules. The
 * destructor finishes the stream's queued work and discards an open capture.
 * is_capturing is "any thread"; the rest follow aotrun.h (end_capture on the
 * thread that began it, except in relaxed mode).
 * ========================================================================= */

class Stream : public detail::Handle<aotrun_stream, aotrun_stream_free> {
 public:
  using Handle::Handle;
  /* Empty. */
  Stream() noexcept = default;

  /* Creates a stream of `kind`. Throws INVALID_ARGUMENT (unknown kind). */
  explicit Stream(aotrun_stream_kind kind) {
    aotrun_stream* s = nullptr;
    throw_on_error(aotrun_stream_create(kind, &s));
    reset(s);
  }

  /* Waits for all work on the stream; throws the first failure of that work
   * since the last synchronize (PACKAGE), or CAPTURE_UNSUPPORTED while
   * capturing. */
  void synchronize() { throw_on_error(aotrun_stream_synchronize(get())); }
  /* Throws INVALID_ARGUMENT (already capturing). */
  void begin_capture(aotrun_capture_mode mode) { throw_on_error(aotrun_stream_begin_capture(get(), mode)); }
  /* Ends the capture and returns the recorded graph. Throws
   * CAPTURE_INVALIDATED, INVALID_ARGUMENT (not capturing, wrong thread). */
  Graph end_capture() {
    aotrun_graph* g = nullptr;
    throw_on_error(aotrun_stream_end_capture(get(), &g));
    return Graph(g);
  }
  bool is_capturing() const noexcept { return aotrun_stream_is_capturing(get()) != 0; }
};

inline void Graph::launch(Stream& stream) { throw_on_error(aotrun_graph_launch(get(), stream.get())); }

/* ===========================================================================
 * Event
 *
 * Owns an aotrun_event, the caller's handle on one asynchronous run.
 * Destroying it does not cancel or wait for the run: the run completes and
 * frees its slot regardless (and a registered callback still fires). All
 * methods are "any thread"; see aotrun.h, "Calls from callbacks", for what
 * an event callback may call.
 * ========================================================================= */

class Event : public detail::Handle<aotrun_event, aotrun_event_free> {
 public:
  using Handle::Handle;

  /* True once the run has completed (successfully or not). */
  bool is_ready() const noexcept { return aotrun_event_is_ready(get()) != 0; }
  /* Waits for completion; throws the run's failure (PACKAGE, ...), and
   * INVALID_ARGUMENT where waiting would deadlock (from a callback on the
   * run's own worker). Any number of times. */
  void wait() { throw_on_error(aotrun_event_wait(get())); }
  /* Waits at most `timeout`: false if the run is still going (TIMEOUT is not
   * thrown), true once it completed successfully; throws its failure. */
  bool wait_timeout(std::chrono::nanoseconds timeout) {
    return !detail::status_is(aotrun_event_wait_timeout(get(), to_ns(timeout)), AOTRUN_ERR_TIMEOUT);
  }

  /* Registers the completion callback, exactly as aotrun_event_set_callback
   * (at most one per event; it fires exactly once, on a worker thread or
   * here if the run already completed; it must not throw). Throws
   * INVALID_ARGUMENT (already set). */
  void set_callback(aotrun_event_callback fn, void* user_data) {
    throw_on_error(aotrun_event_set_callback(get(), fn, user_data));
  }
  /* The same with a callable `fn(aotrun_code code, const char* message)`,
   * moved or copied onto the heap and destroyed right after its one call
   * (message: valid during the call; "" on success). An exception it throws
   * is caught by the library and logged as an error. */
  template <typename F>
  void on_complete(F&& fn) {
    using Fn = typename std::decay<F>::type;
    std::unique_ptr<Fn> box(new Fn(std::forward<F>(fn)));
    throw_on_error(aotrun_event_set_callback(get(), &Event::call_once<Fn>, box.get()));
    box.release();  // the library calls call_once<Fn> exactly once, which frees it
  }

 private:
  static uint64_t to_ns(std::chrono::nanoseconds t) noexcept {
    return t.count() < 0 ? 0 : static_cast<uint64_t>(t.count());
  }
  template <typename Fn>
  static void call_once(void* user_data, aotrun_code code, const char* message) {
    std::unique_ptr<Fn> box(static_cast<Fn*>(user_data));
    (*box)(code, message != nullptr ? message : "");
  }

  friend class Runner;
};

/* ===========================================================================
 * Runner
 *
 * Owns an aotrun_runner: the package's model instances on one device, run in
 * one mode. The runner holds a reference to its package. The destructor
 * waits for the runner's asynchronous runs still in flight (their events
 * complete normally) and must not overlap other calls on the runner.
 * run, run_alloc, the run_async family, wait_all, stats and output_shapes are
 * "any thread" (threaded mode runs concurrently; the other modes serialise
 * runs inside the runner). Run failures throw the errors of
 * aotrun_runner_run: INVALID_ARGUMENT (count, dtype, rank, shape, device,
 * non-contiguous), PACKAGE (the model failed; the runner stays usable),
 * CAPTURE_UNSUPPORTED, DEVICE.
 * ========================================================================= */

class Runner : public detail::Handle<aotrun_runner, aotrun_runner_destroy> {
 public:
  using Handle::Handle;
  /* Empty. */
  Runner() noexcept = default;

  /* Creates a runner of `package` with default options, or with `options`
   * (not retained). Throws INVALID_ARGUMENT, UNSUPPORTED (strict and the
   * mode unavailable; device type unsupported), DEVICE, PACKAGE,
   * OUT_OF_MEMORY. */
  explicit Runner(const Package& package) { create(package.get(), nullptr); }
  Runner(const Package& package, const RunnerOptions& options) { create(package.get(), options.get()); }

  /* The mode actually used, after any fallback. */
  aotrun_mode mode() const noexcept { return aotrun_runner_mode(get()); }

  /* Output shapes for `inputs` (only ndim, shape and dtype are read),
   * concatenated in output order into `shapes` (capacity elements). */
  void output_shapes(ConstTensorSpan inputs, int64_t* shapes, size_t capacity) {
    throw_on_error(aotrun_runner_get_output_shapes(get(), inputs.data(), inputs.size(), shapes, capacity));
  }
  /* The same into a vector of `capacity` elements (the sum of the outputs'
   * ndim, e.g. from Package::outputs()). */
  std::vector<int64_t> output_shapes(ConstTensorSpan inputs, size_t capacity) {
    std::vector<int64_t> shapes(capacity);
    output_shapes(inputs, shapes.data(), shapes.size());
    return shapes;
  }

  /* Whether the package takes inputs of these dtypes and shapes: the output
   * shape query on views without data (aotrun_runner_get_output_shapes;
   * nothing is run for shapes seen before). True, with the outputs' dims
   * concatenated into *output_dims when given (`capacity` elements at most:
   * the sum of the outputs' ndim); false for INVALID_ARGUMENT (shapes or
   * dtypes the package refuses), its message in *why when given. Other
   * errors throw. The probe the CLI and the Triton backend share. */
  bool accepts(const std::vector<DLDataType>& dtypes, const std::vector<std::vector<int64_t>>& shapes, size_t capacity,
               std::vector<int64_t>* output_dims = nullptr, std::string* why = nullptr) {
    std::vector<DLTensor> views(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      views[i].device = DLDevice{kDLCPU, 0};
      views[i].ndim = static_cast<int32_t>(shapes[i].size());
      views[i].dtype = i < dtypes.size() ? dtypes[i] : DLDataType{};
      views[i].shape = const_cast<int64_t*>(shapes[i].data());  // read only
    }
    std::vector<int64_t> dims(capacity + 1);  // never empty: a model without outputs' dims still gets a buffer
    aotrun_status* st = aotrun_runner_get_output_shapes(get(), views.data(), views.size(), dims.data(), dims.size());
    if (st != nullptr && aotrun_status_code(st) == AOTRUN_ERR_INVALID_ARGUMENT) {
      if (why != nullptr) *why = aotrun_status_message(st);
      aotrun_status_free(st);
      return false;
    }
    throw_on_error(st);
    dims.resize(capacity);
    if (output_dims != nullptr) *output_dims = std::move(dims);
    return true;
  }

  /* Runs synchronously into caller-owned outputs of the shapes
   * output_shapes reports. */
  void run(ConstTensorSpan inputs, TensorSpan outputs) {
    throw_on_error(aotrun_runner_run(get(), inputs.data(), inputs.size(), outputs.data(), outputs.size()));
  }
  /* Runs synchronously; the library allocates the `num_outputs` outputs and
   * the caller owns them. On failure nothing is handed over. Also throws
   * OUT_OF_MEMORY. */
  std::vector<ManagedTensor> run_alloc(ConstTensorSpan inputs, size_t num_outputs) {
    std::vector<DLManagedTensor*> raw(num_outputs, nullptr);
    std::vector<ManagedTensor> owned;
    owned.reserve(num_outputs);  // nothing below can throw once the outputs exist
    throw_on_error(aotrun_runner_run_alloc(get(), inputs.data(), inputs.size(), raw.data(), raw.size()));
    for (DLManagedTensor* t : raw) owned.emplace_back(t);
    return owned;
  }

  /* Enqueues a run and returns its event; blocks while the in-flight window
   * is full. The DATA of inputs and outputs must stay alive (and outputs
   * untouched) until the event completes. Throws argument errors (no slot
   * is taken); the run's own failure is thrown by Event::wait. */
  Event run_async(ConstTensorSpan inputs, TensorSpan outputs) {
    aotrun_event* e = nullptr;
    throw_on_error(aotrun_runner_run_async(get(), inputs.data(), inputs.size(), outputs.data(), outputs.size(), &e));
    return Event(e);
  }
  /* Like run_async but never blocks: an empty Event (false) when the window
   * is full (WOULD_BLOCK is not thrown). */
  Event try_run_async(ConstTensorSpan inputs, TensorSpan outputs) {
    aotrun_event* e = nullptr;
    if (detail::status_is(
            aotrun_runner_try_run_async(get(), inputs.data(), inputs.size(), outputs.data(), outputs.size(), &e),
            AOTRUN_ERR_WOULD_BLOCK)) {
      return Event();
    }
    return Event(e);
  }
  /* Like run_async but waits at most `timeout` for a slot: an empty Event
   * when none freed up in time (TIMEOUT is not thrown). */
  Event run_async_timeout(ConstTensorSpan inputs, TensorSpan outputs, std::chrono::nanoseconds timeout) {
    aotrun_event* e = nullptr;
    if (detail::status_is(aotrun_runner_run_async_timeout(get(), inputs.data(), inputs.size(), outputs.data(),
                                                          outputs.size(), Event::to_ns(timeout), &e),
                          AOTRUN_ERR_TIMEOUT)) {
      return Event();
    }
    return Event(e);
  }
  /* Waits until no asynchronous run of this runner is in flight. Throws
   * INVALID_ARGUMENT from an event callback of this runner. */
  void wait_all() { throw_on_error(aotrun_runner_wait_all(get())); }

  /* Snapshot of the counters; fallback_reason is owned by the runner. */
  aotrun_runner_stats stats() const {
    aotrun_runner_stats s{};
    s.struct_size = sizeof(s);
    throw_on_error(aotrun_runner_get_stats(get(), &s));
    return s;
  }

  /* Graph mode: drop every captured graph / stop capturing. No-ops in other
   * modes. */
  void evict_graphs() { throw_on_error(aotrun_runner_evict_graphs(get())); }
  void freeze_graphs() { throw_on_error(aotrun_runner_freeze_graphs(get())); }

  /* Constants while serving (aotrun.h, "Constants"; since 1.2): build the
   * inactive set from named tensors (copied) or a .safetensors file
   * (mapped), make it active, release the inactive one. */
  void update_constants(const std::vector<aotrun_named_tensor>& tensors, uint32_t flags = 0) {
    throw_on_error(aotrun_runner_update_constants(get(), tensors.data(), tensors.size(), flags));
  }
  void update_constants_from_file(const std::string& path, uint32_t flags = 0) {
    throw_on_error(aotrun_runner_update_constants_from_file(get(), path.c_str(), flags));
  }
  void swap_constants() { throw_on_error(aotrun_runner_swap_constants(get())); }
  void free_inactive_constants() { throw_on_error(aotrun_runner_free_inactive_constants(get())); }
  aotrun_constants_state constants_state() const {
    aotrun_constants_state s{};
    s.struct_size = sizeof(s);
    throw_on_error(aotrun_runner_get_constants_state(get(), &s));
    return s;
  }

  /* Runs on the caller's CPU stream (recorded, if it is capturing), with the
   * mode rules of aotrun_runner_run_on_stream. On a worker stream the run's
   * failure may surface at Stream::synchronize. */
  void run_on_stream(Stream& stream, ConstTensorSpan inputs, TensorSpan outputs) {
    throw_on_error(
        aotrun_runner_run_on_stream(get(), stream.get(), inputs.data(), inputs.size(), outputs.data(), outputs.size()));
  }
  /* Runs on a caller's CUDA stream (a cudaStream_t); returns once enqueued.
   * Also throws INVALID_ARGUMENT (NULL stream, runner not on CUDA), DEVICE. */
  void run_on_cuda_stream(void* cuda_stream, ConstTensorSpan inputs, TensorSpan outputs) {
    throw_on_error(aotrun_runner_run_on_cuda_stream(get(), cuda_stream, inputs.data(), inputs.size(), outputs.data(),
                                                    outputs.size()));
  }

 private:
  void create(aotrun_package* package, const aotrun_runner_options* options) {
    aotrun_runner* r = nullptr;
    throw_on_error(aotrun_runner_create(package, options, &r));
    reset(r);
  }
};

}  // namespace cxx
}  // namespace aotrun

#endif /* AOTRUN_AOTRUN_HPP_ */
