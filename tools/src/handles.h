// Owning wrappers around the library's handles, and the open/create steps
// that every subcommand shares.
#ifndef AOTRUN_TOOLS_HANDLES_H_
#define AOTRUN_TOOLS_HANDLES_H_

#include <memory>
#include <string>
#include <vector>

#include <aotrun/aotrun.h>

namespace aotrun_cli {

struct PackageCloser {
  void operator()(aotrun_package* p) const { aotrun_package_close(p); }
};
struct RunnerDestroyer {
  void operator()(aotrun_runner* r) const { aotrun_runner_destroy(r); }
};
using PackagePtr = std::unique_ptr<aotrun_package, PackageCloser>;
using RunnerPtr = std::unique_ptr<aotrun_runner, RunnerDestroyer>;

// Opens `path`; throws Failure with the library's code (NOT_FOUND,
// MISSING_SYMBOL, ...) on error.
PackagePtr open_package(const std::string& path, bool verify_hashes);

struct RunnerConfig {
  aotrun_mode mode = AOTRUN_MODE_THREADED;
  int32_t num_models = 1;
  bool strict = false;
  int32_t max_inflight = 0;  // asynchronous window; 0 = the library's default
};
RunnerPtr create_runner(aotrun_package* package, const RunnerConfig& config);

aotrun_package_info package_info(const aotrun_package* package);
aotrun_runner_stats runner_stats(const aotrun_runner* runner);

// Input/output descriptions copied out of the package (the library's strings
// live as long as the package; copies keep the code free of that coupling).
struct TensorSpec {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape;  // -1 = dynamic
  bool known = true;           // false: dtype and rank unknown (a .pt2 without input checks)
};
std::vector<TensorSpec> package_inputs(const aotrun_package* package);
std::vector<TensorSpec> package_outputs(const aotrun_package* package);
// Symbol names point into the package: valid while it stays open.
std::vector<aotrun_symbol_info> package_symbols(const aotrun_package* package);

}  // namespace aotrun_cli

#endif  // AOTRUN_TOOLS_HANDLES_H_
