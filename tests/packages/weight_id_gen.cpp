// Writes the weights of test package "weight_id" for set s (argv[2], default
// 0): every w = s, every b = 1000 s.
#include <cstdio>
#include <cstdlib>

#include "safetensors_writer.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.safetensors [SET]\n", argv[0]);
    return 2;
  }
  const float s = argc > 2 ? static_cast<float>(std::atof(argv[2])) : 0.0f;
  const bool ok = aotrun_test::write_safetensors(
      argv[1], {{"w", {4096}, std::vector<float>(4096, s)}, {"b", {4}, std::vector<float>(4, 1000 * s)}});
  if (!ok) std::perror(argv[1]);
  return ok ? 0 : 1;
}
