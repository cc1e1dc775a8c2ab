// Command-line parsing for the aotrun subcommands, on CLI11.
//
// Options are GNU style: `--name value`, `--name=value`, or `--flag`; `--`
// ends the options; everything else is positional. Unknown options, missing
// values, values given to flags and repeated single-use options throw
// UsageError (exit code 2). Help texts are the commands' own (kHelp), so
// CLI11's generated help is not used.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aotrun::cli {

struct OptionSpec {
  std::string name;          // without the leading "--"; "help" also answers to -h
  bool takes_value = false;  // false: a flag
  bool repeatable = false;   // may be given more than once (values accumulate)
  char short_name = 0;       // also answers to -<short_name> (0: none)
};

// Help text rows: each option at two spaces, its text from `column` on (on
// the next line when the option is longer), continuation lines aligned.
struct HelpRow {
  const char* option;
  std::vector<const char*> lines;
};
std::string help_rows(size_t column, const std::vector<HelpRow>& rows);

class Args {
 public:
  // Parses argv[begin, end) of subcommand `command` against `specs`.
  static Args parse(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv, int begin);
  // Parses the options in front of a subcommand: stops at the first
  // positional argument, or after `--`, and sets *rest to its index in argv
  // (argc when there is none).
  static Args parse_leading(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv,
                            int begin, int* rest);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // Last value of an option, or `fallback` when absent.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // All values of a repeatable option, in command-line order.
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  // Typed accessors; a value that does not parse or is outside [lo, hi]
  // throws UsageError naming the option.
  int64_t get_int(const std::string& name, int64_t fallback, int64_t lo, int64_t hi) const;
  double get_double(const std::string& name, double fallback, double lo, double hi) const;
  uint64_t get_u64(const std::string& name, uint64_t fallback) const;

  // Exactly one positional argument (the package path), else UsageError.
  std::string single_positional(const std::string& what) const;

  const std::string& command() const { return command_; }

 private:
  static Args parse_impl(const std::string& command, const std::vector<OptionSpec>& specs, int argc, char** argv,
                         int begin, int* rest);

  std::string command_;
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positionals_;
};

}  // namespace aotrun::cli
