// What `aotrun compat` sweeps: packages found in directories or listed in a
// manifest, each with its reference data, tolerances, modes and expectation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace aotrun::cli {

// One set of reference data: the inputs (in the package's input order) and
// the outputs expected for them. Files are .npy; "FILE.safetensors:KEY"
// names one tensor of a .safetensors file.
struct ReferenceSet {
  std::string name;  // "default", or the variant ("b3" of dyn_mlp.b3.in0.npy)
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

struct CompatEntry {
  std::string path;                  // the package (.pt2, .so, or a package directory)
  std::string label;                 // how reports name it (the path as found or listed)
  std::vector<ReferenceSet> sets;    // none: random inputs, modes compared only
  std::optional<double> rtol, atol;  // overrides of the per-dtype defaults
  std::vector<std::string> modes;    // empty: every mode, unavailable ones skipped
  std::string expect = "ok";         // "ok" or "refused"
  std::string expect_code;           // with "refused": the code, or "" for any
  std::optional<double> timeout_s;
  std::optional<int64_t> batch;  // random inputs' dynamic dims (no sets)
  bool verify_hashes = true;
  std::string pt2_model;  // aotrun_package_options_set_pt2_model; "" = default
};

// Packages under `root` (a directory swept recursively, in name order, or
// one package: a .pt2, a .so, a package directory). A directory with a
// manifest.json is a package unless that manifest parses and is not an
// aotrun package's (no "library", format not "aotrun-package"); a package
// directory is not searched further. References beside each package:
// <stem>[.<set>].in<i>.npy and <stem>[.<set>].out<i>.npy, or
// <stem>[.<set>].inputs.safetensors / .outputs.safetensors (tensors in the
// package's order: keys in<i>/out<i>, else the file's order).
// Throws Failure NOT_FOUND when `root` does not exist.
std::vector<CompatEntry> discover_packages(const std::string& root);

// Entries of a compat manifest (docs/CLI.md, "aotrun compat"). Relative
// paths are relative to the manifest's directory. Throws Failure
// (NOT_FOUND, INVALID_ARGUMENT naming the file and the field).
std::vector<CompatEntry> read_compat_manifest(const std::string& path);

// The entry as the child (`aotrun compat-one`) receives it, and back.
nlohmann::json entry_to_json(const CompatEntry& entry);
CompatEntry entry_from_json(const nlohmann::json& j);

// The names of the package modes, in sweep order.
const std::vector<std::string>& compat_mode_names();

}  // namespace aotrun::cli
