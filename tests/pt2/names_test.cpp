// The model's own names for a .pt2's inputs and outputs through the C API
// (issue #28 item 3): aotrun_package_get_input_model_name and
// _get_output_model_name (1.3) give the keyword arguments and output keys
// of the call signature the archive records, the placeholder stays the
// tensor's name. On aotrun's shim (no libtorch needed). The model: tests/pt2/names/export_named.py, torch 2.15.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <aotrun/aotrun.hpp>

using aotrun::cxx::Package;

namespace {

const std::string kNamed = std::string(AOTRUN_PT2_NAMES) + "/named.pt2";

std::string str(const char* s) { return s != nullptr ? s : "(null)"; }

}  // namespace

TEST(Pt2Names, KeywordArgumentsAndOutputKeysAreTheModelsNames) {
  const Package p(kNamed);
  ASSERT_EQ(p.info().num_inputs, 4u);
  // x is positional: torch records no name for it, so it keeps its own.
  EXPECT_EQ(str(p.input(0).name), "arg4_1");
  EXPECT_EQ(p.input_model_name(0), "arg4_1");
  EXPECT_EQ(p.input_model_name(1), "mask");
  EXPECT_EQ(p.input_model_name(2), "extra.bias");
  EXPECT_EQ(p.input_model_name(3), "extra.gain");
  EXPECT_EQ(str(p.input(1).name), "arg5_1");  // the placeholder stays the name
  ASSERT_EQ(p.info().num_outputs, 2u);
  EXPECT_EQ(str(p.output(0).name), "output0");
  EXPECT_EQ(p.output_model_name(0), "logits");
  EXPECT_EQ(p.output_model_name(1), "features");
}

TEST(Pt2Names, PositionalModelsKeepTheirNames) {
  // The corpus exports forward(*args) returning one tensor.
  const Package p(std::string(AOTRUN_PT2_FIXTURES) + "/torch-2.15.0/mlp.pt2");
  for (size_t i = 0; i < p.info().num_inputs; ++i) EXPECT_EQ(p.input_model_name(i), str(p.input(i).name));
  for (size_t i = 0; i < p.info().num_outputs; ++i) EXPECT_EQ(p.output_model_name(i), str(p.output(i).name));
}

TEST(Pt2Names, ErrorsNameTheRange) {
  const Package p(kNamed);
  const char* name = "unchanged";
  aotrun_status* st = aotrun_package_get_output_model_name(p.get(), 2, &name);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(aotrun_status_code(st), AOTRUN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(aotrun_status_message(st)).find("output index 2 out of range (package has 2 outputs)"),
            std::string::npos)
      << aotrun_status_message(st);
  EXPECT_STREQ(name, "unchanged");
  aotrun_status_free(st);
  st = aotrun_package_get_input_model_name(p.get(), 0, nullptr);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(aotrun_status_code(st), AOTRUN_ERR_INVALID_ARGUMENT);
  aotrun_status_free(st);
  st = aotrun_package_get_input_model_name(nullptr, 0, &name);
  ASSERT_NE(st, nullptr);
  aotrun_status_free(st);
}
