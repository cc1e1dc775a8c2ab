// What the C API's opaque handles hold.
#pragma once

#include <memory>
#include <string>

#include "runner/async/async_event.hpp"
#include "device/cpu/graph.hpp"
#include "device/cpu/stream.hpp"
#include "package/package.hpp"
#include "runner/container/options.hpp"
#include "runner/runner.hpp"

struct aotrun_package_options {
  aotrun::PackageOptions options;
  aotrun::ProviderPreview preview;  // the strings aotrun_package_preview_provider hands out
};

struct aotrun_package {
  std::shared_ptr<aotrun::Package> pkg;
};

struct aotrun_runner_options {
  aotrun::RunnerOptions options;
};

struct aotrun_runner {
  std::unique_ptr<aotrun::Runner> runner;
};

struct aotrun_event {
  std::shared_ptr<aotrun::AsyncEvent> ev;
  bool callback_set = false;
};

struct aotrun_stream {
  std::unique_ptr<aotrun::cpu::Stream> stream;
};

struct aotrun_graph {
  std::shared_ptr<const aotrun::cpu::Graph> graph;
};
