// libFuzzer target: argument validation of the C API's run entry points.
//
// Each input decodes to one call (get_output_shapes, run, run_alloc,
// run_async + wait, run_on_stream) on one of three runners (counting threaded
// with 2 models, counting in graph mode, noop single-threaded; both packages
// take x float32 [-1, 4] and give y float32 [-1, 4] with y.shape = x.shape),
// with tensor descriptors that start valid and get 0-4 mutations (ndim,
// shape values, NULL shape, dtype, strides, device, byte_offset, NULL data,
// counts, NULL arrays, capacity, NULL runner).
//
// An oracle written from the C API's contract (aotrun.h) says whether the
// call must be refused (INVALID_ARGUMENT), must succeed, or may go either way
// (empty tensors with odd strides). Memory rule: pointers are always
// dereferenceable as far as a VALID descriptor would be used: shape/strides
// arrays hold 40 entries, tensor arrays 4, data buffers 4096 bytes. A
// descriptor that passes every check the library can make but claims more
// bytes than its buffer holds is a caller lie: such calls are not made. A
// descriptor that must be refused is always passed: if the library accepted
// it, the package's access (or the oracle) reports it.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <aotrun/aotrun.h>

namespace {

constexpr int kMaxRank = 40;
constexpr int kSlots = 4;
constexpr uint64_t kBuf = 4096;

enum class Verdict { Accept, Reject, Either };

struct Env {
  aotrun_package* counting = nullptr;
  aotrun_package* noop = nullptr;
  aotrun_runner* runners[3] = {};
  bool computes[3] = {true, true, false};  // y = x + 1 checkable
  aotrun_stream* stream = nullptr;
};
Env* g_env = nullptr;

// Findings already reported (docs/RELIABILITY.md) can be let through with
// AOTRUN_FUZZ_ALLOW_KNOWN=F4,... so that fuzzing explores past them.
bool allowed(const char* id) {
  const char* v = std::getenv("AOTRUN_FUZZ_ALLOW_KNOWN");
  return v != nullptr && std::strstr(v, id) != nullptr;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

void check_ok(aotrun_status* s, const char* what) {
  if (s != nullptr) die(std::string(what) + ": " + aotrun_status_message(s));
}

struct Tensor {
  DLTensor t{};
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  uint8_t* buf = nullptr;  // kBuf bytes, malloc'd per input (ASan redzones)

  void make_valid(int64_t rows) {
    shape[0] = rows;
    shape[1] = 4;
    t.data = buf;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = 2;
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = nullptr;
    t.byte_offset = 0;
  }
};

int64_t interesting(FuzzedDataProvider& p) {
  static const int64_t values[] = {0,
                                   1,
                                   2,
                                   3,
                                   4,
                                   5,
                                   7,
                                   8,
                                   -1,
                                   -2,
                                   -4,
                                   INT64_MIN,
                                   INT64_MAX,
                                   int64_t(1) << 31,
                                   int64_t(1) << 32,
                                   int64_t(1) << 60,
                                   int64_t(1) << 61,
                                   int64_t(1) << 62,
                                   (int64_t(1) << 62) + 1,
                                   int64_t(1) << 40};
  if (p.ConsumeBool()) return values[p.ConsumeIntegralInRange<size_t>(0, sizeof(values) / sizeof(values[0]) - 1)];
  return p.ConsumeIntegral<int64_t>();
}

// --- the oracle ---------------------------------------------------------------

using u128 = unsigned __int128;

// Elements, exactly (saturating at 2^100): no wrap-around.
u128 true_numel(const DLTensor& t) {
  if (t.ndim < 0 || t.shape == nullptr) return 0;
  u128 n = 1;
  for (int d = 0; d < t.ndim && d < kMaxRank; ++d) {
    if (t.shape[d] <= 0) return 0;
  }
  for (int d = 0; d < t.ndim && d < kMaxRank; ++d) {
    n *= static_cast<uint64_t>(t.shape[d]);
    if (n > (u128(1) << 100)) n = u128(1) << 100;
  }
  return n;
}

bool is_f32(const DLTensor& t) { return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1; }
int32_t device_type(const DLTensor& t) {
  int32_t v;
  std::memcpy(&v, &t.device.device_type, sizeof v);
  return v;
}
bool on_cpu0(const DLTensor& t) { return device_type(t) == kDLCPU && t.device.device_id == 0; }

// Compact row-major (dims of extent 1 may carry any stride); exact math.
bool compact(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  __int128 expect = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

// x's shape is acceptable for a shape query: [n >= 0, 4] float32.
bool query_ok(const DLTensor* inputs, size_t n) {
  if (n != 1 || inputs == nullptr) return false;
  const DLTensor& x = inputs[0];
  return is_f32(x) && x.ndim == 2 && x.shape != nullptr && x.shape[0] >= 0 && x.shape[1] == 4;
}

// Verdict for the data/device/layout of one run tensor.
Verdict tensor_verdict(const DLTensor& t) {
  if (!on_cpu0(t)) return Verdict::Reject;
  const u128 n = true_numel(t);
  if (t.data == nullptr && n > 0) return Verdict::Reject;
  if (!compact(t)) return n == 0 ? Verdict::Either : Verdict::Reject;
  return Verdict::Accept;
}

Verdict worst(Verdict a, Verdict b) {
  if (a == Verdict::Reject || b == Verdict::Reject) return Verdict::Reject;
  if (a == Verdict::Either || b == Verdict::Either) return Verdict::Either;
  return Verdict::Accept;
}

// The buffer behind a descriptor covers everything a valid descriptor
// promises: data + byte_offset + numel * 4 bytes within the allocation.
bool backed(const DLTensor& t, const uint8_t* buf) {
  const u128 bytes = true_numel(t) * 4;
  if (t.data == nullptr) return bytes == 0;
  if (t.data != buf) return false;
  return u128(t.byte_offset) + bytes <= kBuf;
}

// Element k of a float buffer that may be misaligned (odd byte_offset).
float load_f32(const void* base, int64_t k) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * k, sizeof v);
  return v;
}

std::string describe(const DLTensor& t) {
  std::string s = "{ndim " + std::to_string(t.ndim) + ", shape ";
  if (t.shape == nullptr) {
    s += "NULL";
  } else {
    s += "[";
    for (int d = 0; d < t.ndim && d < 4; ++d) s += (d ? ", " : "") + std::to_string(t.shape[d]);
    s += t.ndim > 4 ? ", ...]" : "]";
  }
  s += ", dtype " + std::to_string(t.dtype.code) + "/" + std::to_string(t.dtype.bits) + "x" +
       std::to_string(t.dtype.lanes);
  s += ", device " + std::to_string(device_type(t)) + ":" + std::to_string(t.device.device_id);
  s += std::string(", strides ") + (t.strides ? "set" : "NULL") + ", byte_offset " + std::to_string(t.byte_offset);
  s += std::string(", data ") + (t.data ? "buffer" : "NULL") + "}";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ::setenv("AOTRUN_TEST_SPIN_US", "0", 1);
  aotrun_set_log_level(AOTRUN_LOG_OFF);
  const char* dir = std::getenv("AOTRUN_FUZZ_PACKAGES_DIR");
  if (dir == nullptr) {
    std::fprintf(stderr, "fuzz_capi: set AOTRUN_FUZZ_PACKAGES_DIR to <build>/packages\n");
    std::exit(2);
  }
  g_env = new Env();
  check_ok(aotrun_package_open((std::string(dir) + "/libcounting.so").c_str(), nullptr, &g_env->counting),
           "open counting");
  check_ok(aotrun_package_open((std::string(dir) + "/libnoop.so").c_str(), nullptr, &g_env->noop), "open noop");
  struct Spec {
    aotrun_package* pkg;
    aotrun_mode mode;
    int models;
  } specs[3] = {{g_env->counting, AOTRUN_MODE_THREADED, 2},
                {g_env->counting, AOTRUN_MODE_GRAPH, 1},
                {g_env->noop, AOTRUN_MODE_SINGLE_THREADED, 1}};
  for (int i = 0; i < 3; ++i) {
    aotrun_runner_options* o = nullptr;
    check_ok(aotrun_runner_options_create(&o), "options");
    check_ok(aotrun_runner_options_set_mode(o, specs[i].mode), "mode");
    check_ok(aotrun_runner_options_set_num_models(o, specs[i].models), "models");
    check_ok(aotrun_runner_create(specs[i].pkg, o, &g_env->runners[i]), "runner");
    aotrun_runner_options_free(o);
  }
  check_ok(aotrun_stream_create(AOTRUN_STREAM_INLINE, &g_env->stream), "stream");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const int which = p.ConsumeIntegralInRange(0, 2);
  const int op = p.ConsumeIntegralInRange(0, 4);
  aotrun_runner* runner = g_env->runners[which];

  Tensor in[kSlots], out[kSlots];
  const int64_t rows = p.ConsumeIntegralInRange<int64_t>(0, 8);
  for (int i = 0; i < kSlots; ++i) {
    in[i].buf = static_cast<uint8_t*>(std::malloc(kBuf));
    out[i].buf = static_cast<uint8_t*>(std::malloc(kBuf));
    for (uint64_t k = 0; k < kBuf / 4; ++k) reinterpret_cast<float*>(in[i].buf)[k] = static_cast<float>(k % 97);
    std::memset(out[i].buf, 0xFF, kBuf);
    in[i].make_valid(rows);
    out[i].make_valid(rows);
  }
  DLTensor inputs[kSlots], outputs[kSlots];
  size_t num_inputs = 1, num_outputs = 1, capacity = 2;
  bool inputs_null = false, outputs_null = false, shapes_null = false, runner_null = false;

  const int mutations = p.ConsumeIntegralInRange(0, 4);
  for (int m = 0; m < mutations; ++m) {
    Tensor& t =
        p.ConsumeBool() ? in[p.ConsumeIntegralInRange(0, kSlots - 1)] : out[p.ConsumeIntegralInRange(0, kSlots - 1)];
    switch (p.ConsumeIntegralInRange(0, 16)) {
      case 0: t.t.ndim = p.ConsumeIntegralInRange(-3, kMaxRank); break;
      case 1:
      case 2: t.shape[p.ConsumeIntegralInRange(0, 3)] = interesting(p); break;
      case 3: t.t.shape = nullptr; break;
      case 4: {
        static const uint8_t codes[] = {kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLComplex, 7, 255};
        static const uint8_t bits[] = {8, 16, 32, 64, 0, 33};
        t.t.dtype.code = codes[p.ConsumeIntegralInRange<size_t>(0, sizeof(codes) - 1)];
        t.t.dtype.bits = bits[p.ConsumeIntegralInRange<size_t>(0, sizeof(bits) - 1)];
        t.t.dtype.lanes = p.ConsumeBool() ? 1 : p.ConsumeIntegral<uint16_t>();
        break;
      }
      case 5: {  // explicit strides, compact for the current shape
        int64_t s = 1;
        for (int d = kMaxRank - 1; d >= 0; --d) {
          t.strides[d] = s;
          if (d < t.t.ndim) s *= t.shape[d] > 0 && t.shape[d] < (int64_t(1) << 20) ? t.shape[d] : 1;
        }
        t.t.strides = t.strides;
        break;
      }
      case 6:
        t.strides[p.ConsumeIntegralInRange(0, 3)] = interesting(p);
        t.t.strides = t.strides;
        break;
      case 7:
        // 0..15 is the value range of DLDeviceType (enumerators up to 13);
        // values beyond are finding F9 (UB when the library loads them).
        t.t.device.device_type = static_cast<DLDeviceType>(p.ConsumeBool() ? kDLCPU : p.ConsumeIntegralInRange(0, 15));
        t.t.device.device_id = p.ConsumeBool() ? 0 : p.ConsumeIntegralInRange(-1, 3);
        break;
      case 8: {
        static const uint64_t offs[] = {0, 4, 16, 64, kBuf - 16, kBuf, uint64_t(1) << 40, ~uint64_t(0)};
        t.t.byte_offset =
            p.ConsumeBool() ? offs[p.ConsumeIntegralInRange<size_t>(0, 7)] : p.ConsumeIntegral<uint64_t>();
        break;
      }
      case 9: t.t.data = nullptr; break;
      case 10: num_inputs = p.ConsumeIntegralInRange<size_t>(0, kSlots); break;
      case 11: num_outputs = p.ConsumeIntegralInRange<size_t>(0, kSlots); break;
      case 12: inputs_null = true; break;
      case 13: outputs_null = true; break;
      case 14: capacity = p.ConsumeIntegralInRange<size_t>(0, 4); break;
      case 15: shapes_null = true; break;
      case 16: runner_null = true; break;
    }
  }
  for (int i = 0; i < kSlots; ++i) {
    inputs[i] = in[i].t;
    outputs[i] = out[i].t;
  }
  const DLTensor* ins = inputs_null ? nullptr : inputs;
  DLTensor* outs = outputs_null ? nullptr : outputs;
  if (runner_null) runner = nullptr;

  // Oracle.
  Verdict v = runner != nullptr && query_ok(ins, num_inputs) ? Verdict::Accept : Verdict::Reject;
  const DLTensor& x = inputs[0];
  const DLTensor& y = outputs[0];
  bool memory_ok = true;  // only meaningful when v != Reject
  if (v != Verdict::Reject && op == 0) {
    if (shapes_null || capacity < 2) v = Verdict::Reject;
  } else if (v != Verdict::Reject) {
    v = worst(v, tensor_verdict(x));
    memory_ok = backed(x, in[0].buf);
    if (op == 2) {  // run_alloc: outputs are allocated by the library
      if (num_outputs != 1 || outputs_null) v = Verdict::Reject;
    } else {
      if (num_outputs != 1 || outs == nullptr || !is_f32(y) || y.ndim != 2 || y.shape == nullptr ||
          y.shape[0] != x.shape[0] || y.shape[1] != 4) {
        v = Verdict::Reject;
      } else {
        v = worst(v, tensor_verdict(y));
        memory_ok = memory_ok && backed(y, out[0].buf);
      }
    }
  }
  // A tensor whose byte size is beyond what can be addressed (2^62 bytes) is
  // refused on every path, the shape-only query included.
  const u128 kAddressable = u128(1) << 62;
  if ((ins && x.shape && x.ndim >= 0 && true_numel(x) * 4 > kAddressable) ||
      (outs && op != 0 && op != 2 && y.shape && y.ndim >= 0 && true_numel(y) * 4 > kAddressable)) {
    v = Verdict::Reject;
  }
  if (v != Verdict::Reject && !memory_ok) {
    // A lie the library cannot see: do not make the call.
    for (int i = 0; i < kSlots; ++i) std::free(in[i].buf), std::free(out[i].buf);
    return 0;
  }

  // Known UBSan findings, let through without a recoverable build: F7 (NULL
  // data of empty tensors in graph replay / offset folding), F10 (stride
  // check of huge shapes overflows).
  const bool null_data = (ins && x.data == nullptr) || (outs && y.data == nullptr);
  const bool huge_strided = (ins && x.strides && x.shape && true_numel(x) >= (u128(1) << 61)) ||
                            (outs && y.strides && y.shape && true_numel(y) >= (u128(1) << 61));
  if ((null_data && allowed("F7")) || (huge_strided && allowed("F10"))) {
    for (int i = 0; i < kSlots; ++i) std::free(in[i].buf), std::free(out[i].buf);
    return 0;
  }

  aotrun_status* s = nullptr;
  DLManagedTensor* managed[kSlots] = {};
  int64_t shapes[4] = {-77, -77, -77, -77};
  switch (op) {
    case 0:
      s = aotrun_runner_get_output_shapes(runner, ins, num_inputs, shapes_null ? nullptr : shapes, capacity);
      break;
    case 1: s = aotrun_runner_run(runner, ins, num_inputs, outs, num_outputs); break;
    case 2: s = aotrun_runner_run_alloc(runner, ins, num_inputs, outputs_null ? nullptr : managed, num_outputs); break;
    case 3: {
      aotrun_event* ev = nullptr;
      s = aotrun_runner_run_async(runner, ins, num_inputs, outs, num_outputs, &ev);
      if (s == nullptr) {
        s = aotrun_event_wait(ev);
        aotrun_event_free(ev);
      }
      break;
    }
    case 4: s = aotrun_runner_run_on_stream(runner, g_env->stream, ins, num_inputs, outs, num_outputs); break;
  }

  const aotrun_code code = aotrun_status_code(s);
  const std::string msg = aotrun_status_message(s);
  aotrun_status_free(s);
  const std::string where = "op " + std::to_string(op) + " runner " + std::to_string(which) + " x " +
                            (ins ? describe(x) : "NULL") + " y " + (outs ? describe(y) : "NULL") + " counts " +
                            std::to_string(num_inputs) + "/" + std::to_string(num_outputs) + " capacity " +
                            std::to_string(capacity);
  // F4: a NULL-data tensor whose element count wraps to 0 in 64 bits.
  const bool wraps = (ins && x.data == nullptr && true_numel(x) >= (u128(1) << 64)) ||
                     (outs && y.data == nullptr && true_numel(y) >= (u128(1) << 64));
  if (v == Verdict::Reject && code == AOTRUN_OK && wraps && allowed("F4")) {
    if (op == 2 && managed[0] != nullptr) managed[0]->deleter(managed[0]);
    for (int i = 0; i < kSlots; ++i) std::free(in[i].buf), std::free(out[i].buf);
    return 0;
  }
  if (v == Verdict::Reject && code != AOTRUN_ERR_INVALID_ARGUMENT) {
    die("must be refused with INVALID_ARGUMENT, got " + std::string(aotrun_code_name(code)) + " (" + msg +
        "): " + where);
  }
  if (v == Verdict::Accept && code != AOTRUN_OK) {
    die("valid call refused: " + std::string(aotrun_code_name(code)) + " (" + msg + "): " + where);
  }
  if (v == Verdict::Either && code != AOTRUN_OK && code != AOTRUN_ERR_INVALID_ARGUMENT) {
    die("unexpected code " + std::string(aotrun_code_name(code)) + " (" + msg + "): " + where);
  }

  if (code == AOTRUN_OK) {
    if (op == 0) {
      if (shapes[0] != x.shape[0] || shapes[1] != 4 || shapes[2] != -77) die("wrong output shapes: " + where);
    } else if (op == 2) {
      DLManagedTensor* mt = managed[0];
      if (mt == nullptr) die("run_alloc succeeded without an output: " + where);
      if (mt->dl_tensor.ndim != 2 || mt->dl_tensor.shape[0] != x.shape[0] || mt->dl_tensor.shape[1] != 4) {
        die("run_alloc output has the wrong shape: " + where);
      }
      if (g_env->computes[which] && x.data != nullptr) {
        const uint8_t* xs = static_cast<const uint8_t*>(x.data) + x.byte_offset;
        for (int64_t k = 0; k < x.shape[0] * 4; ++k) {
          if (load_f32(mt->dl_tensor.data, k) != load_f32(xs, k) + 1.f)
            die("run_alloc computed the wrong value: " + where);
        }
      }
      mt->deleter(mt);
    } else if (g_env->computes[which] && x.data != nullptr && y.data != nullptr) {
      const uint8_t* xs = static_cast<const uint8_t*>(x.data) + x.byte_offset;
      const uint8_t* ys = static_cast<const uint8_t*>(y.data) + y.byte_offset;
      for (int64_t k = 0; k < x.shape[0] * 4; ++k) {
        if (load_f32(ys, k) != load_f32(xs, k) + 1.f) die("run computed the wrong value: " + where);
      }
    }
  }
  for (int i = 0; i < kSlots; ++i) std::free(in[i].buf), std::free(out[i].buf);
  return 0;
}
