// What a caller may ask of Package::open, filled by the C API's option
// setters. Options of one package kind live in that kind's sub-struct.
#pragma once

#include <string>

namespace aotrun {

// .pt2 archives only.
struct Pt2Options {
  std::string model = "model";  // which model of the archive
  std::string libtorch;         // libtorch_cpu.so or its directory, or "shim"; "" = $AOTRUN_LIBTORCH
  std::string provider;         // "auto", "shim", "libtorch"; "" = $AOTRUN_PROVIDER (pt2/provider/provider_choice.hpp)
  // Dim 0 of every input is a batch of independent rows: a request with
  // fewer rows than the model was compiled for is padded up to its minimum
  // (the last row repeated) and the outputs' extra rows dropped (docs/PT2.md).
  bool pad_batch = false;
  // Sizes above a dynamic dim's compiled maximum run (the caller states the
  // compiled code is right there; torch narrows upper bounds through
  // heuristics the code does not depend on, docs/PT2.md "Upper bounds").
  bool above_compiled_max = false;
};

// Whether `word` is a value the option `provider` takes (auto, shim,
// libtorch): the C API refuses any other when it is set. Declared here, with
// the option, so that a caller of Package::open need not reach into the .pt2
// kind (defined beside the reader of the option,
// pt2/provider/provider_choice.cpp).
bool is_provider_word(const std::string& word);

struct PackageOptions {
  bool verify_hashes = true;
  std::string expected_sha256;         // of the .so, or of manifest.json; "" = none
  bool allow_untrusted_files = false;  // group/world-writable or foreign-owned files
  Pt2Options pt2;
};

}  // namespace aotrun
