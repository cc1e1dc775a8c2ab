// Compiled with -fsyntax-only by the cpp_api_header_cxx17_* tests, once per
// installed C++ compiler: aotrun.hpp stands alone, is idempotent, and is
// C++17 without warnings under -Wall -Wextra -Wpedantic -Werror.
#include <aotrun/aotrun.hpp>
#include <aotrun/aotrun.hpp>

static_assert(__cplusplus == 201703L, "compiled as C++17");

namespace ax = aotrun::cxx;

// Every template is instantiated once, so that its body is checked too.
inline void instantiate(ax::Runner& runner, ax::Event& event) {
  float data[4] = {};
  const float cdata[4] = {};
  std::vector<int64_t> shape{1, 4};
  DLTensor out = ax::tensor_view(data, shape);
  DLTensor in = ax::tensor_view(cdata, shape);
  DLTensor outs[1] = {out};
  std::array<DLTensor, 1> ins{{in}};
  runner.run(ins, outs);
  event.on_complete([](aotrun_code, const char*) {});
  (void)ax::dtype_of<uint64_t>();
  std::vector<ax::ManagedTensor> m = runner.run_alloc(in, 1);
  (void)m.front().data<float>();
}
