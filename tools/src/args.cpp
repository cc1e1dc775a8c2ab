#include "args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "error.hpp"

namespace aotrun::cli {

namespace {

// How messages name an option: "--name=value" -> "--name".
std::string option_token(const std::string& arg) {
  return arg.compare(0, 2, "--") == 0 ? arg.substr(0, arg.find('=')) : arg;
}

// CLI11 reads tokens such as "-5" (a negative number) as positionals; this
// tool has no such values, so before `--` they stay unknown options.
bool looks_like_option(const std::string& arg) { return arg.size() >= 2 && arg[0] == '-'; }

}  // namespace

Args Args::parse(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv, int begin) {
  return parse_impl(command, specs, argc, argv, begin, nullptr);
}

Args Args::parse_leading(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv,
                         int begin, int* rest) {
  return parse_impl(command, specs, argc, argv, begin, rest);
}

Args Args::parse_impl(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv,
                      int begin, int* rest) {
  CLI::App app;
  app.set_help_flag();  // each command prints its own help text (kHelp)
  // parse_leading: the first positional and all after it are left unparsed.
  app.prefix_command(rest != nullptr);
  // A vector makes CLI11 take any number of positionals; their text is read
  // from the option's results, as given.
  std::vector<std::string> positional_values;
  CLI::Option* positional = nullptr;
  if (rest == nullptr) positional = app.add_option("args", positional_values);

  std::map<const CLI::Option*, const OptionSpec*> spec_of;
  for (const OptionSpec& spec : specs) {
    std::string names = spec.name == "help" ? "-h,--help" : "--" + spec.name;
    if (spec.short_name != 0) names = std::string("-") + spec.short_name + "," + names;
    CLI::Option* option = spec.takes_value ? app.add_option(names) : app.add_flag(names);
    // Keep every occurrence: repeats and flag values are judged below, in
    // command-line order.
    option->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    spec_of[option] = &spec;
  }

  try {
    // argv[begin - 1] stands in for the program name CLI11 skips.
    app.parse(argc - begin + 1, argv + begin - 1);
  } catch (const CLI::ExtrasError&) {
    // Only options can be left over: positionals are all accepted.
    for (const std::string& extra : app.remaining()) {
      if (extra != "--") throw UsageError(command, "unknown option '" + option_token(extra) + "'");
    }
    throw;
  } catch (const CLI::ArgumentMismatch&) {
    // Thrown while parsing only when an option that takes a value is the
    // last argument: there is nothing left to take.
    throw UsageError(command, "option '" + option_token(argv[argc - 1]) + "' needs a value");
  } catch (const CLI::ParseError& e) {
    throw UsageError(command, e.what());
  }

  Args args;
  args.command_ = command;
  std::map<const CLI::Option*, size_t> seen;
  for (const CLI::Option* option : app.parse_order()) {
    auto it = spec_of.find(option);
    if (it == spec_of.end()) continue;  // a positional: read below
    const OptionSpec& spec = *it->second;
    const size_t index = seen[option]++;
    const std::string& value = option->results().at(index);
    // An unvalued flag reads "true"; anything else was given as --flag=VALUE.
    if (!spec.takes_value && value != "true") {
      throw UsageError(command, "option '--" + spec.name + "' takes no value");
    }
    if (!spec.repeatable && index > 0) {
      throw UsageError(command, "option '--" + spec.name + "' given more than once");
    }
    args.values_[spec.name].push_back(spec.takes_value ? value : "");
  }

  const std::vector<std::string> remaining = app.remaining();
  const bool saw_end_of_options = !remaining.empty() && remaining.front() == "--";
  if (rest != nullptr) {
    // What CLI11 left is argv's tail: an unknown option, or `--` and/or the
    // subcommand with its arguments.
    if (!remaining.empty() && !saw_end_of_options && looks_like_option(remaining.front())) {
      throw UsageError(command, "unknown option '" + option_token(remaining.front()) + "'");
    }
    *rest = argc - static_cast<int>(remaining.size()) + (saw_end_of_options ? 1 : 0);
    return args;
  }
  args.positionals_ = positional->results();
  if (!saw_end_of_options) {
    for (const std::string& arg : args.positionals_) {
      if (looks_like_option(arg)) throw UsageError(command, "unknown option '" + option_token(arg) + "'");
    }
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
    throw UsageError(command_, "option '--" + name + "' needs an integer in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "], got '" + text + "'");
  }
  return value;
}

double Args::get_double(const std::string& name, double fallback, double lo, double hi) const {
  if (!has(name)) return fallback;
  const std::string text = get(name);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(value) || value < lo || value > hi) {
    throw UsageError(command_, "option '--" + name + "' needs a number in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "], got '" + text + "'");
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
    throw UsageError(command_, "option '--" + name + "' needs a non-negative integer, got '" + text + "'");
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

std::string help_rows(size_t column, const std::vector<HelpRow>& rows) {
  std::string out;
  for (const HelpRow& r : rows) {
    std::string head = std::string("  ") + r.option;
    head += head.size() + 1 < column ? std::string(column - head.size(), ' ') : "\n" + std::string(column, ' ');
    for (size_t i = 0; i < r.lines.size(); ++i) {
      out += (i == 0 ? head : std::string(column, ' ')) + r.lines[i] + "\n";
    }
  }
  return out;
}

}  // namespace aotrun::cli
