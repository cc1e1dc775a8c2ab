// Package open's metadata container, kept for the first runner (bridge.hpp).
#include <utility>

#include "base/log.hpp"
#include "package/pt2/bridge/bridge.hpp"
#include "package/pt2/loading/omp_threads.hpp"

namespace aotrun::pt2::bridge {

bool park_spare(BridgeContainer* c) {
  if (!c->spare_kind) return false;
  Bridge& b = *c->b;
  {
    std::lock_guard<std::mutex> lock(b.mu);
    if (b.spare == nullptr) {
      c->spare_kind = false;  // kept once: destroyed when it comes back
      c->host = nullptr;      // the metadata host is not the next owner's
      b.spare = c;
      return true;
    }
  }
  return false;
}

namespace {

// The kept container, no longer the bridge's (null when none).
BridgeContainer* unpark(Bridge& b) {
  std::lock_guard<std::mutex> lock(b.mu);
  return std::exchange(b.spare, nullptr);
}

}  // namespace

BridgeContainer* take_spare(Bridge& b, const aotrun_pkg_create_args& args) {
  BridgeContainer* c = unpark(b);
  if (c == nullptr) return nullptr;
  // One model instance (AOTInductor fixes the count at creation) and the
  // model's own constants: what the kept one was made with.
  if (args.num_models == 1 && args.num_constants == 0) {
    c->host = args.host;
    c->omp_threads = omp_threads_per_run(1);
    log(LogLevel::Debug,
        "package '" + b.name + "': the container package open made is the runner's (weights loaded once)");
    return c;
  }
  log(LogLevel::Debug, "package '" + b.name + "': the container package open made is destroyed first (" +
                           (args.num_constants != 0 ? std::string("replacement constants")
                                                    : std::to_string(args.num_models) + " model instances") +
                           " asked for)");
  (void)destroy_container(c);  // not twice the weights while the new one loads
  return nullptr;
}

void drop_spare(Bridge& b) {
  if (BridgeContainer* c = unpark(b)) (void)destroy_container(c);
}

}  // namespace aotrun::pt2::bridge
