// `aotrun inspect`: what a package is, what it exports and what it can run.
#include <algorithm>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "constants_report.hpp"
#include "pt2_facts.hpp"
#include "input_layouts.hpp"
#include "request_checks.hpp"
#include "describe.hpp"
#include "error.hpp"
#include "dims.hpp"
#include "inspect_findings.hpp"
#include "runtime.hpp"
#include "report.hpp"
#include "table.hpp"

namespace aotrun::cli {

namespace {

const char kHelp[] =
    "Usage: aotrun inspect [OPTIONS] PKG\n"
    "\n"
    "Open the package PKG (a package directory, a bare .so or a PyTorch\n"
    "AOTInductor .pt2 archive) and describe it: format, name, ABI version,\n"
    "device, every entry point the loader looked for, which run modes are\n"
    "available (and why not), inputs, outputs, constants, hash verification and\n"
    "load-phase timings. For a .pt2 also what the archive records about itself\n"
    "(archive version, the model's metadata such as AOTI_CPU_ISA, and the torch\n"
    "release that made it where the archive names one), and which C shim\n"
    "provider runs it (aotrun's shim or libtorch) and why. Then the checks made\n"
    "before dlopen of its model library (libtorch C shim functions, symbol\n"
    "versions, instruction set), also printed when the package is refused.\n"
    "\n"
    "Options:\n"
    "  --constants     list every constant (default: the first 20)\n"
    "  --json          print one JSON object instead of text\n"
    "  --no-verify     skip checking the manifest's sha256 hashes\n";

// (the .pt2 open options: open_options_help)
const char kHelpTail[] =
    "  --log LEVEL     library log level: error, warn, info, debug, off\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit status: 0 success, 1 the package failed to open (the findings are\n"
    "still printed to stdout when the file exists), 2 usage error.\n";

// Constants the table shows without --constants: a .pt2 may have thousands.
constexpr size_t kConstantsShown = 20;

constexpr aotrun_mode kModes[] = {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED, AOTRUN_MODE_GRAPH};

struct ModeAvailability {
  aotrun_mode mode;
  bool available;
  std::string reason;
};

std::vector<ModeAvailability> modes_of(const Package& package) {
  std::vector<ModeAvailability> out;
  for (aotrun_mode mode : kModes) {
    const char* reason = nullptr;
    const bool available = package.mode_available(mode, &reason);
    out.push_back({mode, available, reason != nullptr ? reason : ""});
  }
  return out;
}

bool is_pt2(const aotrun_package_info& info) { return info.format != nullptr && std::string(info.format) == "pt2"; }

// "AOTInductor .pt2 (bridged to package ABI 1.1)" or "1.1".
std::string abi_text(const aotrun_package_info& info) {
  if (is_pt2(info)) return "AOTInductor .pt2 (bridged to package ABI " + abi_version_string(info.abi_version) + ")";
  return abi_version_string(info.abi_version);
}

// AOTInductor's entry points have no aotrun ABI version: since is 0.
std::string since_text(uint32_t since) { return since == 0 ? "-" : abi_version_string(since); }

std::string pairs_text(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [k, v] : pairs) {
    if (v.empty()) continue;
    out += (out.empty() ? "" : ", ") + k + " " + v;
  }
  return out.empty() ? "none" : out;
}

// The model's .cpp files open leaves out (past its limit on a model's
// sources): the checks in them are not made, as open's warning says too.
std::string unread_sources_text(const Pt2Facts& facts) {
  std::string names;
  for (const auto& n : facts.unread_sources) names += (names.empty() ? "" : ", ") + n;
  return names + " (past the " + std::to_string(facts.sources_limit >> 20) +
         " MiB of sources open reads): the checks in them are not made";
}

std::vector<std::string> input_names(const Package& package) {
  std::vector<std::string> names;
  for (const TensorSpec& s : package_inputs(package)) names.push_back(s.name);
  return names;
}

nlohmann::ordered_json inspect_json(const Package& package) {
  const aotrun_package_info info = package.info();
  nlohmann::ordered_json j;
  j["format"] = info.format != nullptr ? info.format : "";
  j["name"] = info.name != nullptr ? info.name : "";
  j["path"] = info.path != nullptr ? info.path : "";
  j["abi_version"] = abi_version_string(info.abi_version);
  j["device"] = device_type_name(info.device.device_type);
  j["device_id"] = info.device.device_id;

  nlohmann::ordered_json symbols = nlohmann::ordered_json::object();
  nlohmann::ordered_json details = nlohmann::ordered_json::array();
  for (const aotrun_symbol_info& s : package.symbols()) {
    const std::string name = s.name != nullptr ? s.name : "";
    symbols[name] = s.found != 0;
    details.push_back(
        {{"name", name},
         {"required", s.required != 0},
         {"found", s.found != 0},
         {"since", s.since == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(abi_version_string(s.since))}});
  }
  j["symbols"] = symbols;
  j["symbol_details"] = details;

  nlohmann::ordered_json modes = nlohmann::ordered_json::object();
  for (const ModeAvailability& m : modes_of(package)) {
    modes[aotrun_mode_name(m.mode)] = {{"available", m.available}, {"reason", m.reason}};
  }
  j["modes"] = modes;

  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  const std::vector<TensorSpec> input_specs = package_inputs(package);
  for (const TensorSpec& spec : input_specs) inputs.push_back(tensor_spec_json(spec));
  // Read once: the archive's records and its sources (dims, checks, layouts).
  const std::optional<Pt2Facts> pt2 =
      is_pt2(info) ? std::optional<Pt2Facts>(read_pt2_facts(info.path != nullptr ? info.path : "")) : std::nullopt;
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  const std::vector<TensorSpec> output_specs = package_outputs(package);
  const std::vector<std::vector<size_t>> data_dependent =
      data_dependent_dims(pt2 ? pt2->sources : std::string(), output_specs.size());
  for (size_t i = 0; i < output_specs.size(); ++i) {
    nlohmann::ordered_json o = tensor_spec_json(output_specs[i]);
    // The dims (shape -1) whose size the run reads from input values.
    if (!data_dependent[i].empty()) o["data_dependent_dims"] = data_dependent[i];
    outputs.push_back(std::move(o));
  }
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  const std::string no_sources;
  const std::string& sources = pt2 ? pt2->sources : no_sources;
  j["dynamic_dims"] = dims_json(report_dims(DimPlan::make(input_specs, sources), input_specs, sources));
  j["constants"] = {{"count", info.num_constants}, {"bytes", info.constant_bytes}};
  j["constants"]["list"] = constants_json(package);
  if (pt2) {
    j["constants"]["in_model_library"] = true;
    const Pt2Facts& facts = *pt2;
    nlohmann::ordered_json pt2;
    pt2["abi"] = abi_text(info);
    pt2["torch_version"] =
        facts.torch_version ? nlohmann::ordered_json(*facts.torch_version) : nlohmann::ordered_json();
    nlohmann::ordered_json records = nlohmann::ordered_json::object();
    for (const auto& [k, v] : facts.records) records[k] = v;
    pt2["records"] = records;
    nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
    for (const auto& [k, v] : facts.model_metadata) metadata[k] = v;
    pt2["model_metadata"] = metadata;
    pt2["proxy_executor_ops"] = facts.proxy_ops;
    if (!facts.readable) pt2["error"] = facts.error;
    j["pt2"] = pt2;
    const std::vector<std::string> names = input_names(package);
    j["request_checks"] = request_checks_json(read_request_checks(facts.sources, names.size()), names);
    j["request_checks"]["sources_not_read"] = facts.unread_sources;
    j["input_layouts"] = input_layouts_json(read_input_layouts(facts.sources, names));
  }
  const ProviderInfo provider = package.provider();
  j["provider"] = provider.name.empty() ? nlohmann::ordered_json()
                                        : nlohmann::ordered_json{{"name", provider.name}, {"reason", provider.reason}};
  j["hashes_verified"] = info.hashes_verified != 0;
  j["load_ns"] = load_ns_json(info);
  j["library_version"] = aotrun_version_string();
  return j;
}

// Outputs with data-dependent dims: those dims as "data-dependent" in the
// shape, and a note saying how such an output runs.
void output_rows(Table& table, const std::vector<TensorSpec>& specs,
                 const std::vector<std::vector<size_t>>& data_dependent) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    const std::vector<size_t>& dd = data_dependent[i];
    if (!spec.known || dd.empty()) {
      table.add({tensor_label(spec), spec.known ? dtype_name(spec.dtype) : "unknown",
                 spec.known ? spec_shape_text(spec.shape) : "?"});
      continue;
    }
    std::string shape = "[";
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      const bool by_run = std::find(dd.begin(), dd.end(), d) != dd.end();
      shape += (d ? ", " : "") + (by_run               ? std::string("data-dependent")
                                  : spec.shape[d] >= 0 ? std::to_string(spec.shape[d])
                                                       : std::string("?"));
    }
    shape += "]";
    table.add({tensor_label(spec), dtype_name(spec.dtype), shape,
               "sized by the run from the input values: run_alloc (docs/PT2.md, \"Data-dependent sizes\")"});
  }
}

// Inputs' dynamic dims show the model's symbol where it has one ([s33, s50]).
void tensor_rows(Table& table, const std::vector<TensorSpec>& specs, const DimPlan* dims = nullptr) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& spec = specs[i];
    std::string shape = spec.known ? spec_shape_text(spec.shape) : "?";
    if (spec.known && dims != nullptr) {
      shape = "[";
      for (size_t d = 0; d < spec.shape.size(); ++d) {
        const int k = dims->dim_of(i, static_cast<int>(d));
        const bool symbol = k >= 0 && dims->dims()[k].name.find(':') == std::string::npos;
        shape += (d ? ", " : "") + (spec.shape[d] >= 0 ? std::to_string(spec.shape[d])
                                    : symbol           ? dims->dims()[k].name
                                    : d == 0           ? std::string("batch")
                                                       : std::string("?"));
      }
      shape += "]";
    }
    table.add({tensor_label(spec), spec.known ? dtype_name(spec.dtype) : "unknown", shape});
  }
}

void inspect_text(const Package& package, size_t constants_limit, std::ostream& out) {
  const aotrun_package_info info = package.info();
  Table head;
  head.add({"name", info.name != nullptr ? info.name : ""});
  head.add({"path", info.path != nullptr ? info.path : ""});
  head.add({"format", info.format != nullptr ? info.format : ""});
  head.add({"abi", abi_text(info)});
  // Read once: the archive's records for the head, its sources for the
  // request checks below.
  const std::optional<Pt2Facts> pt2 =
      is_pt2(info) ? std::optional<Pt2Facts>(read_pt2_facts(info.path != nullptr ? info.path : "")) : std::nullopt;
  if (pt2) {
    const Pt2Facts& facts = *pt2;
    if (facts.readable) {
      head.add({"torch", facts.torch_version ? *facts.torch_version : "not recorded in the archive"});
      head.add({"archive", pairs_text(facts.records)});
      head.add({"model metadata", pairs_text(facts.model_metadata)});
      if (!facts.proxy_ops.empty()) {
        std::string ops;
        for (const auto& op : facts.proxy_ops) ops += (ops.empty() ? "" : ", ") + op;
        head.add({"proxy executor", ops + " (extern kernel nodes; run by aotrun's shim: docs/SHIM.md)"});
      }
    } else {
      head.add({"archive", "unreadable: " + facts.error});
    }
  }
  const ProviderInfo provider = package.provider();
  if (!provider.name.empty()) head.add({"provider", provider.name + ": " + provider.reason});
  head.add({"device", device_name(info.device)});
  head.add({"constants", constants_summary(info)});
  head.add({"hashes", info.hashes_verified != 0 ? "verified" : "not verified"});
  head.add({"load", load_text(info)});
  head.print(out);

  const auto inputs = package_inputs(package);
  const DimPlan dims = DimPlan::make(inputs, pt2 ? pt2->sources : std::string());
  out << "\ninputs (" << inputs.size() << ")\n";
  Table in_table(2);
  tensor_rows(in_table, inputs, &dims);
  in_table.print(out);

  const auto outputs = package_outputs(package);
  out << "\noutputs (" << outputs.size() << ")\n";
  Table out_table(2);
  output_rows(out_table, outputs, data_dependent_dims(pt2 ? pt2->sources : std::string(), outputs.size()));
  out_table.print(out);

  out << "\ndynamic dims (run, check, bench: --dim NAME=SIZE; --batch sets those at dim 0)\n";
  Table dim_table(2);
  dim_rows(report_dims(dims, inputs, pt2 ? pt2->sources : std::string()), dim_table);
  dim_table.print(out);

  if (pt2) {
    const Pt2Facts& facts = *pt2;
    out << "\ninput layouts (what the model was compiled for)\n";
    Table layouts(2);
    input_layout_rows(read_input_layouts(facts.sources, input_names(package)), layouts);
    layouts.print(out);
    out << "\nrequest checks (before each run; docs/PT2.md, \"Bad requests\")\n";
    Table checks(2);
    request_check_rows(read_request_checks(facts.sources, inputs.size()), input_names(package), checks);
    if (!facts.unread_sources.empty()) checks.add({"not read", unread_sources_text(facts)});
    checks.print(out);
  }

  print_constants(package, constants_limit, out);

  out << "\nsymbols\n";
  Table sym_table(2);
  sym_table.add({"NAME", "SINCE", "REQUIRED", "FOUND"});
  for (const aotrun_symbol_info& s : package.symbols()) {
    sym_table.add({s.name != nullptr ? s.name : "", since_text(s.since), s.required != 0 ? "yes" : "no",
                   s.found != 0 ? "yes" : "no"});
  }
  sym_table.print(out);

  out << "\nmodes\n";
  Table mode_table(2);
  for (const ModeAvailability& m : modes_of(package)) {
    mode_table.add({aotrun_mode_name(m.mode), m.available ? "available" : "unavailable: " + m.reason});
  }
  mode_table.print(out);
}

}  // namespace

int inspect_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  specs.push_back({"json", false, false});
  specs.push_back({"constants", false, false});
  const Args args = Args::parse("inspect", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp << open_options_help(18) << kHelpTail;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");

  // Also shows the pre-dlopen findings when the open is refused (inspect_findings.h).
  const Package package = open_or_show_findings(path, args, args.has("json"));
  if (args.has("json")) {
    nlohmann::ordered_json j = inspect_json(package);
    j["link_findings"] = link_findings_json(path);
    std::cout << j.dump(2) << '\n';
  } else {
    inspect_text(package, args.has("constants") ? SIZE_MAX : kConstantsShown, std::cout);
    link_findings_text(path, std::cout);
  }
  return kExitOk;
}

}  // namespace aotrun::cli
