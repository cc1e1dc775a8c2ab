// Runs a package with one float32 input [batch, n] through aotrun.hpp:
// synchronously into caller memory, with library-allocated outputs, and
// asynchronously. Usage: cpp_host PKG
#include <aotrun/aotrun.hpp>

#include <cstdio>
#include <vector>

namespace ax = aotrun::cxx;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cpp_host PKG\n");
    return 2;
  }
  try {
    ax::Package package(argv[1]);  // throws ax::Error (NOT_FOUND, INTEGRITY, ...)
    const aotrun_tensor_info in = package.input(0), out = package.output(0);
    ax::Runner runner(package, ax::RunnerOptions().mode(AOTRUN_MODE_GRAPH).max_inflight(4));

    // Inputs and outputs are DLTensor views of the caller's memory.
    std::vector<int64_t> x_shape{8, in.shape[1]}, y_shape{8, out.shape[1]};
    std::vector<float> x(static_cast<size_t>(8 * in.shape[1]), 0.25f);
    std::vector<float> y(static_cast<size_t>(8 * out.shape[1]));
    const DLTensor x_view = ax::tensor_view(x.data(), x_shape);
    DLTensor y_view = ax::tensor_view(y.data(), y_shape);
    runner.run(x_view, y_view);

    // The library allocates the outputs; the ManagedTensors free them.
    std::vector<ax::ManagedTensor> managed = runner.run_alloc(x_view, 1);
    const bool same = managed[0].data<float>()[0] == y[0];

    // Asynchronous: the buffers must outlive the run; wait() throws its failure.
    ax::Event done = runner.run_async(x_view, y_view);
    done.wait();

    const aotrun_runner_stats stats = runner.stats();
    std::printf("%s: mode %s, %llu runs, y[0] = %g, run_alloc %s\n", package.info().name, ax::mode_name(runner.mode()),
                static_cast<unsigned long long>(stats.runs), y[0], same ? "agrees" : "differs");
    return same ? 0 : 1;
  } catch (const ax::Error& e) {
    std::fprintf(stderr, "cpp_host: %s: %s\n", e.code_name(), e.what());
    return 1;
  }
}
