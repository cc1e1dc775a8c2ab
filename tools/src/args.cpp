#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "error.h"

namespace aotrun_cli {

namespace {

const OptionSpec* find_spec(const std::vector<OptionSpec>& specs, const std::string& name) {
  for (const OptionSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace

Args Args::parse(const std::string& command, const std::vector<OptionSpec>& specs, int argc,
                 char** argv, int begin) {
  Args args;
  args.command_ = command;
  bool options_done = false;
  for (int i = begin; i < argc; ++i) {
    const std::string arg = argv[i];
    if (options_done || arg.size() < 2 || arg[0] != '-') {
      args.positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    if (arg == "-h") {
      args.values_["help"].push_back("");
      continue;
    }
    if (arg.compare(0, 2, "--") != 0) {
      throw UsageError(command, "unknown option '" + arg + "'");
    }
    std::string name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const OptionSpec* spec = find_spec(specs, name);
    if (spec == nullptr) throw UsageError(command, "unknown option '--" + name + "'");
    if (spec->takes_value) {
      if (!inline_value) {
        if (i + 1 >= argc) throw UsageError(command, "option '--" + name + "' needs a value");
        value = argv[++i];
      }
    } else if (inline_value) {
      throw UsageError(command, "option '--" + name + "' takes no value");
    }
    if (!spec->repeatable && args.values_.count(name) != 0) {
      throw UsageError(command, "option '--" + name + "' given more than once");
    }
    args.values_[name].push_back(value);
  }
  return args;
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

int64_t Args::get_int(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lo || value > hi) {
    throw UsageError(command_, "option '--" + name + "' needs an integer in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                                   text + "'");
  }
  return value;
}

double Args::get_double(const std::string& name, double fallback, double lo, double hi) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value < lo ||
      value > hi) {
    throw UsageError(command_, "option '--" + name + "' needs a number in [" +
                                   std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                                   text + "'");
  }
  return value;
}

uint64_t Args::get_u64(const std::string& name, uint64_t fallback) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE) {
    throw UsageError(command_,
                     "option '--" + name + "' needs a non-negative integer, got '" + text + "'");
  }
  return value;
}

std::string Args::single_positional(const std::string& what) const {
  if (positionals_.empty()) throw UsageError(command_, "missing " + what);
  if (positionals_.size() > 1) {
    throw UsageError(command_, "unexpected argument '" + positionals_[1] + "'");
  }
  return positionals_[0];
}

}  // namespace aotrun_cli
