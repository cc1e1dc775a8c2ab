// Writes deterministic MLP inputs and reference outputs for tests in other
// languages (the Rust crates read them; they cannot link this C++ reference).
//
//   mlp_reference_dump WEIGHTS_FILE OUT_DIR
//
// OUT_DIR/input_b<B>.f32, OUT_DIR/output_b<B>.f32: raw little-endian float32,
// row-major, for B in {3, 8}; OUT_DIR/index.json describes them.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "mlp_reference.h"

namespace {

void write_f32(const std::string& path, const std::vector<float>& v) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  // x86-64 and every other target we support is little-endian; write bytes as is.
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s WEIGHTS_FILE OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    const std::string dir = argv[2];
    const auto weights = aotrun::test::Safetensors::load(argv[1]);
    const aotrun::test::MlpReference ref(weights);
    std::string cases;
    for (int64_t batch : {3, 8}) {
      const std::vector<float> x = aotrun::test::mlp_reference_input(batch);
      const std::vector<float> y = ref.forward(x, batch);
      const std::string b = std::to_string(batch);
      write_f32(dir + "/input_b" + b + ".f32", x);
      write_f32(dir + "/output_b" + b + ".f32", y);
      if (!cases.empty()) cases += ",\n";
      cases += "    {\"batch\": " + b + ", \"input\": \"input_b" + b + ".f32\", \"input_shape\": [" + b +
               ", 256], \"output\": \"output_b" + b + ".f32\", \"output_shape\": [" + b + ", 64]}";
    }
    std::ofstream index(dir + "/index.json", std::ios::trunc);
    index << "{\n  \"model\": \"mlp\",\n  \"dtype\": \"float32\",\n"
          << "  \"byte_order\": \"little\",\n  \"tolerance\": 1e-4,\n"
          << "  \"cases\": [\n"
          << cases << "\n  ]\n}\n";
    if (!index) throw std::runtime_error("cannot write " + dir + "/index.json");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_reference_dump: %s\n", e.what());
    return 1;
  }
  return 0;
}
