#include <algorithm>
#include <cstring>

#include "linkinfo/shim_releases.hpp"

namespace aotrun {

std::string shim_first_release(const std::string& name) {
  const ShimRelease* end = kShimReleases + kShimReleaseCount;
  // The generator writes the names sorted.
  const ShimRelease* it = std::lower_bound(kShimReleases, end, name, [](const ShimRelease& r, const std::string& n) {
    return std::strcmp(r.name, n.c_str()) < 0;
  });
  const auto v = [](int m) { return "2." + std::to_string(m); };
  // The table lists libtorch_cpu's exports; the CUDA shim is libtorch_cuda's.
  if ((it == end || name != it->name) && name.find("cuda") != std::string::npos) return "libtorch_cuda";
  if (it == end || name != it->name) return "a torch newer than " + v(kShimNewestKnownMinor);
  if (it->first_min == 0) return "torch " + v(it->first_max) + " or earlier";
  if (it->first_min == it->first_max) return "torch " + v(it->first_max);
  return "torch " + v(it->first_min) + " to " + v(it->first_max);
}

}  // namespace aotrun
