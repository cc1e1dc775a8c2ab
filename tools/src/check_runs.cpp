#include "check_runs.hpp"

#include <cstring>
#include <string>

#include "error.hpp"
#include "inputs.hpp"
#include "outputs.hpp"

namespace aotrun::cli {

namespace {

std::string run_label(size_t index, bool async) {
  return std::string(async ? "asynchronous run " : "run ") + std::to_string(index + 1);
}

}  // namespace

ModeRuns run_mode(const Package& package, const RunnerConfig& config, bool async, const std::vector<DLTensor>& inputs,
                  const std::vector<TensorSpec>& output_specs, int runs, bool allocating) {
  ModeRuns result;
  if (allocating) {
    Runner runner = create_runner(package, config);
    for (int r = 0; r < runs; ++r) {
      result.outputs.push_back(
          run_allocating(runner.get(), inputs, output_specs, run_label(static_cast<size_t>(r), false)));
    }
    result.effective = runner.mode();
    result.stats = runner.stats();
    result.stats.fallback_reason = nullptr;
    return result;
  }
  // Declared before the runner so that, on any exit, the runner (which waits
  // for its in-flight runs) goes first and the buffers after it.
  std::vector<std::vector<DLTensor>> output_views(static_cast<size_t>(runs));
  Runner runner = create_runner(package, config);
  for (int r = 0; r < runs; ++r) {
    result.outputs.push_back(allocate_outputs(runner.get(), inputs, output_specs));
    for (HostTensor& t : result.outputs.back()) std::memset(t.data(), 0xFF, t.nbytes());
    output_views[static_cast<size_t>(r)] = views(result.outputs.back());
  }
  std::vector<aotrun::cxx::Event> events;
  for (size_t r = 0; r < output_views.size(); ++r) {
    std::vector<DLTensor>& out = output_views[r];
    if (!async) {
      check(aotrun_runner_run(runner.get(), inputs.data(), inputs.size(), out.data(), out.size()), run_label(r, false));
      continue;
    }
    aotrun_event* event = nullptr;
    aotrun_status* status =
        aotrun_runner_run_async(runner.get(), inputs.data(), inputs.size(), out.data(), out.size(), &event);
    if (status != nullptr) {
      aotrun_status_free(aotrun_runner_wait_all(runner.get()));
      check(status, "submitting " + run_label(r, true));
    }
    events.emplace_back(event);
  }
  // Wait for all of them before reporting the first failure.
  aotrun_status* first = nullptr;
  size_t first_index = 0;
  for (size_t r = 0; r < events.size(); ++r) {
    aotrun_status* status = aotrun_event_wait(events[r].get());
    if (first == nullptr) {
      first = status;
      first_index = r;
    } else if (status != nullptr) {
      aotrun_status_free(status);
    }
  }
  check(first, run_label(first_index, true));
  result.effective = runner.mode();
  result.stats = runner.stats();
  result.stats.fallback_reason = nullptr;
  return result;
}

}  // namespace aotrun::cli
