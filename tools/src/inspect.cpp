// `aotrun inspect`: what a package is, what it exports and what it can run.
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "describe.h"
#include "error.h"
#include "runtime.h"
#include "report.h"
#include "table.h"

namespace aotrun_cli {

namespace {

const char kHelp[] =
    "Usage: aotrun inspect [OPTIONS] PKG\n"
    "\n"
    "Open the package PKG (a package directory or a bare .so) and describe it:\n"
    "format, name, ABI version, device, every entry point the loader looked for,\n"
    "which run modes are available (and why not), inputs, outputs, constants,\n"
    "hash verification and load-phase timings.\n"
    "\n"
    "Options:\n"
    "  --json          print one JSON object instead of text\n"
    "  --no-verify     skip checking the manifest's sha256 hashes\n"
    "  --log LEVEL     library log level: error, warn, info, debug, off\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit status: 0 success, 1 the package failed to open, 2 usage error.\n";

constexpr aotrun_mode kModes[] = {AOTRUN_MODE_THREADED, AOTRUN_MODE_SINGLE_THREADED,
                                  AOTRUN_MODE_GRAPH};

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
    details.push_back({{"name", name},
                       {"required", s.required != 0},
                       {"found", s.found != 0},
                       {"since", abi_version_string(s.since)}});
  }
  j["symbols"] = symbols;
  j["symbol_details"] = details;

  nlohmann::ordered_json modes = nlohmann::ordered_json::object();
  for (const ModeAvailability& m : modes_of(package)) {
    modes[aotrun_mode_name(m.mode)] = {{"available", m.available}, {"reason", m.reason}};
  }
  j["modes"] = modes;

  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (const TensorSpec& spec : package_inputs(package)) inputs.push_back(tensor_spec_json(spec));
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (const TensorSpec& spec : package_outputs(package)) {
    outputs.push_back(tensor_spec_json(spec));
  }
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  j["constants"] = {{"count", info.num_constants}, {"bytes", info.constant_bytes}};
  j["hashes_verified"] = info.hashes_verified != 0;
  j["load_ns"] = load_ns_json(info);
  j["library_version"] = aotrun_version_string();
  return j;
}

void tensor_rows(Table& table, const std::vector<TensorSpec>& specs) {
  for (const TensorSpec& spec : specs) {
    table.add({spec.name, spec.known ? dtype_name(spec.dtype) : "unknown", spec.known ? spec_shape_text(spec.shape) : "?"});
  }
}

void inspect_text(const Package& package, std::ostream& out) {
  const aotrun_package_info info = package.info();
  Table head;
  head.add({"name", info.name != nullptr ? info.name : ""});
  head.add({"path", info.path != nullptr ? info.path : ""});
  head.add({"format", info.format != nullptr ? info.format : ""});
  head.add({"abi", abi_version_string(info.abi_version)});
  head.add({"device", device_name(info.device)});
  head.add({"constants", std::to_string(info.num_constants) + " (" +
                             bytes_text(info.constant_bytes) + ")"});
  head.add({"hashes", info.hashes_verified != 0 ? "verified" : "not verified"});
  head.add({"load", load_text(info)});
  head.print(out);

  const auto inputs = package_inputs(package);
  out << "\ninputs (" << inputs.size() << ")\n";
  Table in_table(2);
  tensor_rows(in_table, inputs);
  in_table.print(out);

  const auto outputs = package_outputs(package);
  out << "\noutputs (" << outputs.size() << ")\n";
  Table out_table(2);
  tensor_rows(out_table, outputs);
  out_table.print(out);

  out << "\nsymbols\n";
  Table sym_table(2);
  sym_table.add({"NAME", "SINCE", "REQUIRED", "FOUND"});
  for (const aotrun_symbol_info& s : package.symbols()) {
    sym_table.add({s.name != nullptr ? s.name : "", abi_version_string(s.since),
                   s.required != 0 ? "yes" : "no", s.found != 0 ? "yes" : "no"});
  }
  sym_table.print(out);

  out << "\nmodes\n";
  Table mode_table(2);
  for (const ModeAvailability& m : modes_of(package)) {
    mode_table.add({aotrun_mode_name(m.mode),
                    m.available ? "available" : "unavailable: " + m.reason});
  }
  mode_table.print(out);
}

}  // namespace

int inspect_main(int argc, char** argv, int begin) {
  auto specs = common_options();
  specs.push_back({"json", false, false});
  const Args args = Args::parse("inspect", specs, argc, argv, begin);
  if (args.has("help")) {
    std::cout << kHelp;
    return kExitOk;
  }
  apply_log_option(args);
  const std::string path = args.single_positional("package path (PKG)");

  const Package package = open_package(path, !args.has("no-verify"));
  if (args.has("json")) {
    std::cout << inspect_json(package).dump(2) << '\n';
  } else {
    inspect_text(package, std::cout);
  }
  return kExitOk;
}

}  // namespace aotrun_cli
