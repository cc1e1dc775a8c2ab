#include "tensor.hpp"

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "buffer_cache.hpp"
#include "handle_pool.hpp"
#include "device_layers.hpp"
#include "dtype.hpp"
#include "error.hpp"

namespace aotrun::shim {
namespace {

// From this thread's buffer cache (buffer_cache.hpp); given back with
// release_block(p, nbytes).
void* allocate_bytes(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  void* p = allocate_block(nbytes);
  if (p == nullptr) throw ShimError("out of memory allocating " + std::to_string(nbytes) + " bytes");
  return p;
}

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t nbytes) {
  return std::make_shared<Storage>(Key{}, allocate_bytes(nbytes), nbytes, true);
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes) {
  return std::make_shared<Storage>(Key{}, data, nbytes, false);
}

std::shared_ptr<Storage> Storage::deferred(size_t nbytes, std::function<void(void*)> fill, const void* source,
                                           std::shared_ptr<const BlockedLayout> layout) {
  auto s = std::make_shared<Storage>(Key{}, nullptr, nbytes, true);
  s->fill_ = std::move(fill);
  s->source_ = source;
  s->source_layout_ = std::move(layout);
  s->read_only_.store(true, std::memory_order_release);
  return s;
}

void* Storage::made() const {
  if (is_made_.load(std::memory_order_acquire)) return data_;
  std::call_once(made_once_, [this] {
    void* p = allocate_bytes(nbytes_);
    try {
      if (p != nullptr) fill_(p);
    } catch (...) {
      release_block(p, nbytes_);
      throw;
    }
    data_ = p;
    is_made_.store(true, std::memory_order_release);
  });
  return data_;
}

std::shared_ptr<const void> Storage::read() const {
  if (!fill_ || is_made_.load(std::memory_order_acquire)) return {data_, [](const void*) {}};
  if (nbytes_ == 0) return {nullptr, [](const void*) {}};
  void* p = allocate_bytes(nbytes_);
  const size_t n = nbytes_;
  std::shared_ptr<const void> lent(p, [n](const void* q) { release_block(const_cast<void*>(q), n); });
  fill_(p);
  return lent;
}

std::shared_ptr<Storage> Storage::allocate_on(const aotrun_shim_device_layer* layer, int32_t device_index,
                                              size_t nbytes) {
  void* data = nullptr;
  void* record = nullptr;
  if (const char* why = layer->allocate(device_index, nbytes, &data, &record)) {
    throw ShimError(std::string("allocating ") + std::to_string(nbytes) + " bytes of " + layer->name +
                    " memory: " + why);
  }
  auto s = std::make_shared<Storage>(Key{}, data, nbytes, true);
  s->layer_ = layer;
  s->device_index_ = device_index;
  s->record_ = record;
  return s;
}

Storage::~Storage() {
  if (!owned_) return;
  if (layer_ != nullptr) {
    layer_->release(device_index_, data_, record_);
  } else {
    release_block(data_, nbytes_);
  }
}

void Storage::grow(size_t nbytes) {
  if (nbytes <= nbytes_) return;
  if (read_only_) throw ShimError("cannot grow a frozen constant's memory to " + std::to_string(nbytes) + " bytes");
  if (!owned_)
    throw ShimError("cannot grow borrowed memory (create_tensor_from_blob) to " + std::to_string(nbytes) + " bytes");
  if (layer_ != nullptr) {
    // New memory from the layer; after the copy the two storages trade
    // memory, and `fresh` releases the old one as it goes.
    const std::shared_ptr<Storage> fresh = allocate_on(layer_, device_index_, nbytes);
    if (nbytes_ > 0) {
      if (const char* why = layer_->copy_bytes(device_index_, fresh->data_, layer_->device_type, data_,
                                               layer_->device_type, nbytes_)) {
        throw ShimError(std::string("growing ") + layer_->name + " memory: " + why);
      }
    }
    std::swap(data_, fresh->data_);
    std::swap(record_, fresh->record_);
    std::swap(nbytes_, fresh->nbytes_);
    return;
  }
  void* p = allocate_bytes(nbytes);
  if (nbytes_ > 0) std::memcpy(p, data_, nbytes_);
  release_block(data_, nbytes_);
  data_ = p;
  nbytes_ = nbytes;
}

std::shared_ptr<void> Storage::derived(const std::vector<int64_t>& key,
                                       const std::function<std::shared_ptr<void>()>& make) {
  if (!read_only_) throw ShimError("derived copies are kept only for read-only (frozen constant) storage");
  std::lock_guard<std::mutex> lock(derived_mu_);
  for (const auto& [k, v] : derived_) {
    if (k == key) return v;
  }
  std::shared_ptr<void> made = make();
  derived_.emplace_back(key, made);
  return made;
}

void resize_output(Tensor& out, const std::vector<int64_t>& sizes, const char* op) {
  if (out.sizes == sizes) return;
  std::vector<int64_t> strides = contiguous_strides(sizes);
  const size_t need = storage_nbytes_for(sizes, strides, out.storage_offset, out.itemsize());
  try {
    if (out.storage->nbytes() < need) out.storage->grow(need);
  } catch (const ShimError& e) {
    throw ShimError(std::string(op) + ": argument 'out' must be resized to " + std::to_string(need) +
                    " bytes: " + e.what());
  }
  out.sizes = sizes;
  out.strides = std::move(strides);
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

size_t Tensor::itemsize() const { return element_size(dtype); }

void* Tensor::data() const {
  if (!storage) return nullptr;
  void* base = storage->data();
  if (base == nullptr) return nullptr;
  return static_cast<char*>(base) + storage_offset * static_cast<int64_t>(itemsize());
}

std::shared_ptr<const void> Tensor::read() const {
  if (!storage) return nullptr;
  std::shared_ptr<const void> base = storage->read();
  if (base == nullptr) return nullptr;
  return {base, static_cast<const char*>(base.get()) + storage_offset * static_cast<int64_t>(itemsize())};
}

void* Tensor::element(const int64_t* index) const {
  int64_t off = 0;
  for (size_t d = 0; d < sizes.size(); ++d) off += index[d] * strides[d];
  return static_cast<char*>(data()) + off * static_cast<int64_t>(itemsize());
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes[d] == 0) return true;
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool Tensor::is_non_overlapping_and_dense() const {
  const int64_t n = dim();
  if (n == 0) return true;
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t expected = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = perm[i];
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

size_t storage_nbytes_for(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset,
                          size_t itemsize) {
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    extent += (sizes[d] - 1) * strides[d];
  }
  return static_cast<size_t>(extent + offset) * itemsize;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

std::vector<int64_t> strides_in_order(const std::vector<int64_t>& sizes, const std::vector<int64_t>& order) {
  std::vector<int64_t> st(sizes.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(order.size()) - 1; i >= 0; --i) {
    st[order[i]] = acc;
    acc *= std::max<int64_t>(sizes[order[i]], 1);
  }
  return st;
}

std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> order = {0};
  for (int64_t d = 2; d < static_cast<int64_t>(sizes.size()); ++d) order.push_back(d);
  order.push_back(1);
  return strides_in_order(sizes, order);
}

AtenTensorHandle new_handle(Tensor t) {
  HandleOwner h = blank_handle();
  // Into a recycled Tensor's vectors where they have room (t's own are
  // freed with t), else t's moved in.
  const auto take = [](std::vector<int64_t>& into, std::vector<int64_t>& from) {
    if (into.capacity() >= from.size()) {
      into.assign(from.begin(), from.end());
    } else {
      into.swap(from);
    }
  };
  take(h->sizes, t.sizes);
  take(h->strides, t.strides);
  std::shared_ptr<Storage> storage = std::move(t.storage);  // moved, not shared
  share_view(t, *h);
  h->storage = std::move(storage);
  return release_handle(std::move(h));
}

Tensor& as_tensor(AtenTensorHandle h, const char* what) {
  if (h == nullptr) throw ShimError(std::string(what) + " is a null tensor handle");
  return *reinterpret_cast<Tensor*>(h);
}

void allocate_storage(Tensor& t, int32_t dtype, int32_t device_type, int32_t device_index) {
  const size_t item = element_size(dtype);
  if (item == 0) throw ShimError(std::string("unknown dtype ") + dtype_name(dtype));
  const size_t nbytes = storage_nbytes_for(t.sizes, t.strides, 0, item);
  if (device_type == kCPU) {
    t.storage = Storage::allocate(nbytes);
    t.device_index = -1;
  } else {
    t.storage = Storage::allocate_on(require_device_layer(device_type, "a new tensor"), device_index, nbytes);
    t.device_index = device_index;
  }
  t.storage_offset = 0;
  t.dtype = dtype;
  t.device_type = device_type;
}

Tensor empty_tensor(std::vector<int64_t> sizes, std::vector<int64_t> strides, int32_t dtype, int32_t device_type,
                    int32_t device_index) {
  Tensor t;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  allocate_storage(t, dtype, device_type, device_index);
  return t;
}

void share_view(const Tensor& base, Tensor& t) {
  t.storage = base.storage;
  t.storage_offset = base.storage_offset;
  t.dtype = base.dtype;
  t.device_type = base.device_type;
  t.device_index = base.device_index;
  t.layout = base.layout;
}

Tensor empty_contiguous(const std::vector<int64_t>& sizes, int32_t dtype, int32_t device_type, int32_t device_index) {
  return empty_tensor(sizes, contiguous_strides(sizes), dtype, device_type, device_index);
}

std::vector<int64_t> broadcast_strides(const Tensor& dst, const Tensor& src) {
  const int64_t nd = dst.dim();
  const int64_t ns = src.dim();
  if (ns > nd)
    throw ShimError("cannot copy a " + std::to_string(ns) + "-d tensor into a " + std::to_string(nd) + "-d one");
  std::vector<int64_t> sstr(nd, 0);
  for (int64_t i = 0; i < ns; ++i) {
    const int64_t dd = nd - ns + i;
    if (src.sizes[i] == dst.sizes[dd]) {
      sstr[dd] = src.strides[i];
    } else if (src.sizes[i] != 1) {
      throw ShimError("the size of the source (" + std::to_string(src.sizes[i]) + ") must match the size of " +
                      "the destination (" + std::to_string(dst.sizes[dd]) + ") at dim " + std::to_string(dd));
    }
  }
  return sstr;
}

namespace {

// complex64/complex128 take part in copies too (since aotrun-shim 1.4: a
// model's torch.fft of a real tensor copies it into a complex one first):
// a real value becomes (value, 0); a complex one copied into a real dtype
// keeps its real part (bool: either part non-zero), as libtorch's copy_.
bool is_complex_pair(int32_t dtype) { return dtype == kComplex64 || dtype == kComplex128; }
std::complex<double> load_as_complex(const char* p, int32_t dtype) {
  if (dtype == kComplex64) {
    float v[2];
    std::memcpy(v, p, sizeof v);
    return {v[0], v[1]};
  }
  if (dtype == kComplex128) {
    double v[2];
    std::memcpy(v, p, sizeof v);
    return {v[0], v[1]};
  }
  return {load_as_double(p, dtype), 0.0};
}
void store_from_complex(char* p, int32_t dtype, std::complex<double> v) {
  if (dtype == kComplex64) {
    const float f[2] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
    std::memcpy(p, f, sizeof f);
  } else if (dtype == kComplex128) {
    const double d[2] = {v.real(), v.imag()};
    std::memcpy(p, d, sizeof d);
  } else if (dtype == kBool) {
    store_from_double(p, dtype, v.real() != 0 || v.imag() != 0 ? 1.0 : 0.0);
  } else {
    store_from_double(p, dtype, v.real());
  }
}

}  // namespace

void copy_host_elements(const Tensor& dst, const Tensor& src) {
  const int64_t nd = dst.dim();
  const int64_t ns = src.dim();
  const std::vector<int64_t> sstr = broadcast_strides(dst, src);
  const int64_t n = dst.numel();
  if (n == 0) return;
  const bool same = dst.dtype == src.dtype;
  const bool cplx = is_complex_pair(dst.dtype) || is_complex_pair(src.dtype);
  if (!same && ((!is_convertible(dst.dtype) && !is_complex_pair(dst.dtype)) ||
                (!is_convertible(src.dtype) && !is_complex_pair(src.dtype)))) {
    throw ShimError(std::string("copy from ") + dtype_name(src.dtype) + " to " + dtype_name(dst.dtype) +
                    " is not supported");
  }
  const int64_t di = static_cast<int64_t>(dst.itemsize());
  const int64_t si = static_cast<int64_t>(src.itemsize());
  char* dbase = static_cast<char*>(dst.data());
  const char* sbase = static_cast<const char*>(src.data());
  // Fast path: both dense in the same row-major order.
  if (same && dst.is_contiguous() && ns == nd && src.is_contiguous() && src.sizes == dst.sizes) {
    if (dbase != sbase) std::memmove(dbase, sbase, static_cast<size_t>(n * di));
    return;
  }
  // Rows along the innermost dim; the outer dims are walked with an odometer.
  const int64_t inner = nd > 0 ? dst.sizes[nd - 1] : 1;
  const int64_t dinc = nd > 0 ? dst.strides[nd - 1] : 0, sinc = nd > 0 ? sstr[nd - 1] : 0;
  const int64_t rows = n / inner;
  std::vector<int64_t> idx(nd > 0 ? nd - 1 : 0, 0);
  int64_t doff = 0, soff = 0;
  for (int64_t r = 0; r < rows; ++r) {
    char* d = dbase + doff * di;
    const char* s = sbase + soff * si;
    if (same && dinc == 1 && sinc == 1) {
      std::memmove(d, s, static_cast<size_t>(inner * di));
    } else if (same && di == 4) {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(d + i * dinc * 4, s + i * sinc * 4, 4);
    } else if (same) {
      for (int64_t i = 0; i < inner; ++i) std::memcpy(d + i * dinc * di, s + i * sinc * si, static_cast<size_t>(di));
    } else if (cplx) {
      for (int64_t i = 0; i < inner; ++i) {
        store_from_complex(d + i * dinc * di, dst.dtype, load_as_complex(s + i * sinc * si, src.dtype));
      }
    } else {
      for (int64_t i = 0; i < inner; ++i) {
        store_from_double(d + i * dinc * di, dst.dtype, load_as_double(s + i * sinc * si, src.dtype));
      }
    }
    for (int64_t dd = nd - 2; dd >= 0; --dd) {
      if (++idx[dd] < dst.sizes[dd]) {
        doff += dst.strides[dd];
        soff += sstr[dd];
        break;
      }
      doff -= dst.strides[dd] * (dst.sizes[dd] - 1);
      soff -= sstr[dd] * (dst.sizes[dd] - 1);
      idx[dd] = 0;
    }
  }
}

}  // namespace aotrun::shim
