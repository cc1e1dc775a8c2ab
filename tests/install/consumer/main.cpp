// Opens a package with the installed library through the installed
// aotrun.hpp, runs it once, and prints its ABI version; a failure is an
// aotrun::cxx::Error.
#include <aotrun/aotrun.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  namespace ax = aotrun::cxx;
  try {
    ax::Package package(argv[1]);
    const aotrun_package_info info = package.info();
    ax::Runner runner(package, ax::RunnerOptions().mode(AOTRUN_MODE_SINGLE_THREADED));
    std::vector<int64_t> shape{1, package.input(0).shape[1]};
    std::vector<float> x(static_cast<size_t>(shape[1]), 0.5f);
    const std::vector<ax::ManagedTensor> y = runner.run_alloc(ax::tensor_view(x.data(), shape), 1);
    std::printf("c++ %s abi %u.%u library %s outputs %lld\n", info.name, info.abi_version >> 16,
                info.abi_version & 0xFFFF, ax::version_string(), static_cast<long long>(y[0].numel()));
    ax::Package missing(std::string(argv[1]) + "/no-such-package");
  } catch (const ax::Error& e) {
    std::printf("error %s: %s\n", e.code_name(), e.what());
    return e.code() == AOTRUN_ERR_NOT_FOUND ? 0 : 1;
  }
  return 1;
}
