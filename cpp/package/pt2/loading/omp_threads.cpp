#include "package/pt2/loading/omp_threads.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace aotrun::pt2 {
namespace {

struct Omp {
  void (*set_num_threads)(int) = nullptr;
  int (*get_max_threads)() = nullptr;
};

// omp_set_num_threads / omp_get_max_threads of the libgomp already in the
// process: models and the shim load it (RTLD_LOCAL, so it is looked up
// through its own handle, which is kept: the functions stay valid however
// the models come and go). libaotrun itself does not link libgomp.
const Omp* omp() {
  static std::atomic<const Omp*> found{nullptr};
  const Omp* o = found.load(std::memory_order_acquire);
  if (o != nullptr) return o;
  void* h = ::dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return nullptr;
  auto* fresh = new Omp;  // one per process, never freed
  fresh->set_num_threads = reinterpret_cast<void (*)(int)>(::dlsym(h, "omp_set_num_threads"));
  fresh->get_max_threads = reinterpret_cast<int (*)()>(::dlsym(h, "omp_get_max_threads"));
  if (fresh->set_num_threads == nullptr || fresh->get_max_threads == nullptr) {
    delete fresh;
    return nullptr;
  }
  const Omp* expected = nullptr;
  if (!found.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) {
    delete fresh;
    return expected;
  }
  return fresh;
}

}  // namespace

int omp_threads_per_run(size_t instances) {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  cpus = std::max(cpus, 1);
  return std::max(1, cpus / static_cast<int>(std::max<size_t>(instances, 1)));
}

OmpThreadsScope::OmpThreadsScope(int threads) {
  if (threads <= 0) return;
  const Omp* o = omp();
  if (o == nullptr) return;
  previous_ = o->get_max_threads();
  if (previous_ == threads) {
    previous_ = 0;
    return;
  }
  o->set_num_threads(threads);
}

OmpThreadsScope::~OmpThreadsScope() {
  if (previous_ > 0) omp()->set_num_threads(previous_);
}

}  // namespace aotrun::pt2
