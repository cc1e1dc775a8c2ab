// Per-call latency of PyTorch's C++ loader (torch::inductor::AOTIModelPackageLoader)
// on a .pt2 with its reference inputs: the baseline aotrun's own C++ path is
// compared with in bench/pt2/run.sh. Built against a torch wheel's headers and
// libraries (bench/pt2/run.sh --torch-cpp does it); not part of the CMake build.
//
//   torch_loader_bench PKG.pt2 INPUT0.npy [INPUT1.npy ...]  ->  "p50_us p90_us"
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A little-endian .npy array in C order, of a dtype the corpus's inputs
// use (float32/64, int64/32, bool).
at::Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not .npy");
  const size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
  const std::string header = all.substr(10, hlen);
  if (header.find("'fortran_order': False") == std::string::npos) throw std::runtime_error(path + ": not C order");
  const std::pair<const char*, at::ScalarType> kinds[] = {{"'<f4'", torch::kFloat32},
                                                          {"'<f8'", torch::kFloat64},
                                                          {"'<i8'", torch::kInt64},
                                                          {"'<i4'", torch::kInt32},
                                                          {"'|b1'", torch::kBool}};
  at::ScalarType type = at::ScalarType::Undefined;
  for (const auto& [descr, t] : kinds) {
    if (header.find(descr) != std::string::npos) type = t;
  }
  if (type == at::ScalarType::Undefined) throw std::runtime_error(path + ": a dtype this baseline does not read");
  std::vector<int64_t> shape;
  std::stringstream dims(header.substr(header.find('(') + 1, header.find(')') - header.find('(') - 1));
  std::string d;
  while (std::getline(dims, d, ',')) {
    if (d.find_first_of("0123456789") != std::string::npos) shape.push_back(std::stoll(d));
  }
  auto t = torch::empty(shape, type);
  if (all.size() < 10 + hlen + t.nbytes()) throw std::runtime_error(path + ": shorter than its header says");
  std::memcpy(t.data_ptr(), all.data() + 10 + hlen, t.nbytes());
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s PKG.pt2 INPUT.npy...\n", argv[0]);
    return 2;
  }
  torch::set_num_threads(1);
  std::vector<at::Tensor> inputs;
  for (int i = 2; i < argc; ++i) inputs.push_back(read_npy(argv[i]));
  torch::inductor::AOTIModelPackageLoader loader(argv[1]);
  constexpr int kWarmup = 100, kIters = 2000;
  for (int i = 0; i < kWarmup; ++i) (void)loader.run(inputs);
  std::vector<double> us;
  us.reserve(kIters);
  for (int i = 0; i < kIters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = loader.run(inputs);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%.1f %.1f\n", us[us.size() / 2], us[us.size() * 9 / 10]);
  return 0;
}
