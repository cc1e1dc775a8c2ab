#include "inputs.hpp"

#include "describe.hpp"
#include "dims.hpp"
#include "error.hpp"
#include "input_layouts.hpp"
#include "npy.hpp"
#include "pt2_facts.hpp"

namespace aotrun::cli {

namespace {

std::string names_of(const std::vector<TensorSpec>& specs) {
  std::string out;
  for (const TensorSpec& spec : specs) out += (out.empty() ? "" : ", ") + tensor_label(spec);
  return out.empty() ? "none" : out;
}

void check_against_spec(const HostTensor& t, const TensorSpec& spec, const std::string& path) {
  if (!spec.known) return;  // the package states nothing to check against
  const std::string where = "input '" + tensor_label(spec) + "' from '" + path + "'";
  if (t.dtype().code != spec.dtype.code || t.dtype().bits != spec.dtype.bits || t.dtype().lanes != spec.dtype.lanes) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT,
                  where + ": dtype " + dtype_name(t.dtype()) + ", the package expects " + dtype_name(spec.dtype));
  }
  if (t.shape().size() != spec.shape.size()) {
    throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, where + ": shape " + shape_text(t.shape()) + " has rank " +
                                                   std::to_string(t.shape().size()) + ", the package expects " +
                                                   spec_shape_text(spec.shape));
  }
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    if (spec.shape[d] >= 0 && spec.shape[d] != t.shape()[d]) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, where + ": shape " + shape_text(t.shape()) + ", the package expects " +
                                                     spec_shape_text(spec.shape));
    }
  }
}

// Per-input seeds: one scrambling round keeps input i and i+1 from sharing a
// shifted stream.
uint64_t input_seed(uint64_t seed, size_t index) {
  uint64_t z = seed ^ ((index + 1) * 0xD1B54A32D192ED03ull);
  z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
  return z ^ (z >> 33);
}

}  // namespace

void add_input_options(std::vector<OptionSpec>& specs) {
  for (const char* name : {"batch", "seed", "layout"}) specs.push_back({name, true, false});
  specs.push_back({"input", true, true});
  specs.push_back({"dim", true, true});
}

std::string input_options_help(size_t column) {
  return help_rows(
      column,
      {
          {"--batch N", {"size of the dynamic dims at dim 0 (default: 1, or 2", "when the model refuses 1)"}},
          {"--dim NAME=N",
           {"size of one dynamic dim, by the name inspect shows", "(s23) or as INPUT:DIM (input_ids:1); repeatable.",
            "Dims not set: 1, or 2 when the model refuses 1"}},
          {"--layout L",
           {"compiled (default): inputs a .pt2 was compiled for", "in another layout (channels_last) are passed in it;",
            "row-major: passed row-major (converted per run)"}},
          {"--input NAME=FILE", {"read input NAME from a .npy file (repeatable)"}},
          {"--seed S", {"seed of the random inputs (default 0)"}},
      });
}

InputPlan input_plan(const Args& args) {
  InputPlan plan;
  plan.files = parse_input_options(args.command(), args.all("input"));
  plan.dims = parse_dim_options(args.command(), args.all("dim"));
  if (args.has("batch")) plan.batch = args.get_int("batch", 1, 0, INT32_MAX);
  plan.seed = args.get_u64("seed", 0);
  const std::string layout = args.get("layout", "compiled");
  if (layout != "compiled" && layout != "row-major") {
    throw UsageError(args.command(), "--layout must be compiled or row-major, got '" + layout + "'");
  }
  return plan;
}

void plan_for_package(const Args& args, const Package& package, const std::vector<TensorSpec>& specs, InputPlan* plan) {
  plan->accepts = dynamic_size_probe(package, specs);
  add_model_facts(package, specs, args.get("layout", "compiled") == "row-major", plan);
}

void add_model_facts(const Package& package, const std::vector<TensorSpec>& specs, bool row_major, InputPlan* plan) {
  const aotrun_package_info info = package.info();
  if (info.format == nullptr || std::string(info.format) != "pt2" || info.path == nullptr) return;
  Pt2Facts facts = read_pt2_facts(info.path);
  if (!facts.readable) return;
  if (!row_major) {
    std::vector<std::string> names;
    for (const TensorSpec& s : specs) names.push_back(s.name);
    plan->layouts = read_input_layouts(facts.sources, names);  // one per input, in order
  }
  plan->pt2_sources = std::move(facts.sources);
}

std::map<std::string, std::string> parse_input_options(const std::string& command,
                                                       const std::vector<std::string>& values) {
  std::map<std::string, std::string> files;
  for (const std::string& value : values) {
    const size_t eq = value.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
      throw UsageError(command, "--input needs NAME=FILE.npy, got '" + value + "'");
    }
    const std::string name = value.substr(0, eq);
    if (!files.emplace(name, value.substr(eq + 1)).second) {
      throw UsageError(command, "--input given twice for '" + name + "'");
    }
  }
  return files;
}

namespace {

// --input by the placeholder or the model's own name; one file per input.
std::vector<const std::string*> input_files(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  std::vector<const std::string*> file_of(specs.size(), nullptr);
  for (const auto& [name, path] : plan.files) {
    const int i = find_spec(specs, name);
    if (i < 0) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--input '" + name + "=" + path +
                                                     "': the package has no input named '" + name +
                                                     "' (inputs: " + names_of(specs) + ")");
    }
    if (file_of[i] != nullptr) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--input '" + name + "=" + path + "': input '" +
                                                     tensor_label(specs[i]) + "' is also given as '" + *file_of[i] +
                                                     "'");
    }
    file_of[i] = &path;
  }
  return file_of;
}

// Each dynamic dim's size as far as it is fixed, and what fixed it (for
// messages; "" while nothing has).
struct DimSizes {
  std::vector<int64_t> sizes;
  std::vector<std::string> set_by;
};

// The sizes --dim and --batch set.
DimSizes option_sizes(const DimPlan& dims, const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  DimSizes s{std::vector<int64_t>(dims.dims().size(), 0), std::vector<std::string>(dims.dims().size())};
  std::vector<int64_t>& sizes = s.sizes;
  std::vector<std::string>& set_by = s.set_by;
  auto dims_list = [&] {
    std::string all;
    for (const DynamicDim& d : dims.dims())
      all += (all.empty() ? "" : "; ") + d.name + " (" + dims.where(d, specs) + ")";
    return all.empty() ? std::string("none") : all;
  };
  for (const auto& [name, size] : plan.dims) {
    const int k = dims.find(name, specs);
    if (k < 0) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--dim '" + name + "=" + std::to_string(size) +
                                                     "': the package has no dynamic dim '" + name +
                                                     "' (its dims: " + dims_list() + ")");
    }
    if (!set_by[k].empty() && sizes[k] != size) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "--dim '" + name + "=" + std::to_string(size) + "': dim " +
                                                     dims.dims()[k].name + " is also set to " +
                                                     std::to_string(sizes[k]) + " by " + set_by[k]);
    }
    sizes[k] = size;
    set_by[k] = "--dim " + name;
  }
  if (plan.batch) {
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (set_by[k].empty() && (plan.batch_all_dims || dims.dims()[k].leading)) {
        sizes[k] = *plan.batch;
        set_by[k] = "--batch";
      }
    }
  }
  return s;
}

// The inputs given as files, read first: they fix the sizes of their dims
// for the generated inputs.
void read_input_files(const std::vector<TensorSpec>& specs, const std::vector<const std::string*>& file_of,
                      const DimPlan& dims, DimSizes& s, BuiltInputs& built) {
  std::vector<int64_t>& sizes = s.sizes;
  std::vector<std::string>& set_by = s.set_by;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (file_of[i] == nullptr) continue;
    const std::string& file = *file_of[i];
    built.tensors[i] = read_npy(file, specs[i].name);
    check_against_spec(built.tensors[i], specs[i], file);
    built.sources[i] = "file " + file;
    for (size_t d = 0; d < specs[i].shape.size(); ++d) {
      const int k = dims.dim_of(i, static_cast<int>(d));
      if (k < 0) continue;
      const int64_t got = built.tensors[i].shape()[d];
      if (!set_by[k].empty() && sizes[k] != got) {
        throw Failure(AOTRUN_ERR_INVALID_ARGUMENT,
                      "input '" + tensor_label(specs[i]) + "' from '" + file + "' has dim " + std::to_string(d) +
                          " = " + std::to_string(got) + ", but " + set_by[k] + " sets " + dims.dims()[k].name + " (" +
                          dims.where(dims.dims()[k], specs) + ") to " + std::to_string(sizes[k]));
      }
      sizes[k] = got;
      set_by[k] = "input '" + tensor_label(specs[i]) + "' from '" + file + "'";
    }
  }
}

// The size of the dims nothing set: 1, or 2 where the model refuses 1
// (torch compiles dynamic dims for 2 and up); --batch under batch_all_dims.
int64_t fallback_size(const InputPlan& plan, const DimSizes& s) {
  int64_t fallback = plan.batch && plan.batch_all_dims ? *plan.batch : 1;
  bool unset = false;
  for (const std::string& by : s.set_by) unset = unset || by.empty();
  if (unset && !(plan.batch && plan.batch_all_dims) && plan.accepts && !plan.accepts(1) && plan.accepts(2)) {
    fallback = 2;
  }
  return fallback;
}

// Every dim's size settled (`fallback` where unset), into built.dims, and
// the batch.
void settle_dims(const DimPlan& dims, const std::vector<TensorSpec>& specs, const InputPlan& plan, int64_t fallback,
                 DimSizes& s, BuiltInputs& built) {
  for (size_t k = 0; k < s.sizes.size(); ++k) {
    if (s.set_by[k].empty()) s.sizes[k] = fallback;
  }
  built.batch = plan.batch.value_or(fallback);
  for (size_t k = 0; k < s.sizes.size(); ++k) {
    const DynamicDim& d = dims.dims()[k];
    built.dims.push_back({d.name, s.sizes[k], d.leading, dims.where(d, specs)});
    if (d.leading && !plan.batch) built.batch = s.sizes[k];
  }
}

// The inputs not given as files: random, of the settled sizes.
void random_inputs(const std::vector<TensorSpec>& specs, const std::vector<const std::string*>& file_of,
                   const DimPlan& dims, const std::vector<int64_t>& sizes, int64_t fallback, const InputPlan& plan,
                   BuiltInputs& built) {
  for (size_t i = 0; i < specs.size(); ++i) {
    if (file_of[i] != nullptr) continue;
    if (!specs[i].known) {
      throw Failure(AOTRUN_ERR_INVALID_ARGUMENT, "input '" + tensor_label(specs[i]) +
                                                     "' has no known dtype or shape (the package does not state "
                                                     "them); give it with --input " +
                                                     specs[i].name + "=FILE.npy");
    }
    std::vector<int64_t> shape = specs[i].shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] >= 0) continue;
      if (!dims.size_of(i, static_cast<int>(d), sizes, &shape[d])) shape[d] = fallback;
    }
    built.tensors[i] = HostTensor(specs[i].name, specs[i].dtype, shape);
    fill_random(built.tensors[i], input_seed(plan.seed, i));
    built.sources[i] = "random (seed " + std::to_string(plan.seed) + ")";
  }
}

// Inputs in the layout the model was compiled for (what a caller holding
// channels_last tensors passes), so runs measure no conversion.
void lay_out_inputs(const std::vector<TensorSpec>& specs, const InputPlan& plan, BuiltInputs& built) {
  built.laid_out.resize(specs.size());
  built.layout_names.resize(specs.size());
  for (size_t i = 0; i < specs.size() && i < plan.layouts.size(); ++i) {
    const InputLayout& l = plan.layouts[i];
    if (l.strides.empty() || l.kind == "row-major" || l.kind == "unknown" ||
        l.strides.size() != built.tensors[i].shape().size())
      continue;
    built.laid_out[i] = built.tensors[i].in_layout_of(l.strides);
    built.layout_names[i] = l.kind;
    built.sources[i] += ", passed " + built.layout_names[i];
  }
}

}  // namespace

BuiltInputs build_inputs(const std::vector<TensorSpec>& specs, const InputPlan& plan) {
  const std::vector<const std::string*> file_of = input_files(specs, plan);
  const DimPlan dims = DimPlan::make(specs, plan.pt2_sources);
  DimSizes s = option_sizes(dims, specs, plan);
  BuiltInputs built;
  built.tensors.resize(specs.size());
  built.sources.resize(specs.size());
  read_input_files(specs, file_of, dims, s, built);
  const int64_t fallback = fallback_size(plan, s);
  settle_dims(dims, specs, plan, fallback, s, built);
  random_inputs(specs, file_of, dims, s.sizes, fallback, plan, built);
  lay_out_inputs(specs, plan, built);
  return built;
}

std::string dims_text(const BuiltInputs& built) {
  if (built.dims.empty()) return "static shapes";
  if (built.dims.size() == 1 && built.dims[0].leading) return "batch " + std::to_string(built.dims[0].size);
  std::string text;
  for (const BuiltInputs::Dim& d : built.dims) {
    text += (text.empty() ? "" : ", ") + d.name + "=" + std::to_string(d.size) + " (" + d.where + ")";
  }
  return text;
}

std::vector<DLTensor> input_views(BuiltInputs& built) {
  std::vector<DLTensor> out;
  out.reserve(built.tensors.size());
  for (size_t i = 0; i < built.tensors.size(); ++i) {
    const bool laid = i < built.laid_out.size() && built.laid_out[i].data() != nullptr;
    out.push_back(laid ? built.laid_out[i].view() : built.tensors[i].view());
  }
  return out;
}

std::vector<DLTensor> views(std::vector<HostTensor>& tensors) {
  std::vector<DLTensor> out;
  out.reserve(tensors.size());
  for (HostTensor& t : tensors) out.push_back(t.view());
  return out;
}

}  // namespace aotrun::cli
