// Options shared by all subcommands.
#include <aotrun/aotrun.h>

#include "commands.hpp"
#include "describe.hpp"
#include "error.hpp"

namespace aotrun::cli {

std::vector<OptionSpec> common_options() {
  return {
      {"help", false, true},
      {"log", true, false},
      {"no-verify", false, false},
      {"pad-batch", false, false},
      {"above-compiled-max", false, false},
  };
}

void apply_log_option(const Args& args) {
  if (!args.has("log")) return;
  const std::string level = args.get("log");
  struct Named {
    const char* name;
    aotrun_log_level level;
  };
  static const Named kLevels[] = {{"error", AOTRUN_LOG_ERROR},
                                  {"warn", AOTRUN_LOG_WARN},
                                  {"info", AOTRUN_LOG_INFO},
                                  {"debug", AOTRUN_LOG_DEBUG},
                                  {"off", AOTRUN_LOG_OFF}};
  for (const Named& named : kLevels) {
    if (level == named.name) {
      aotrun_set_log_level(named.level);
      return;
    }
  }
  throw UsageError(args.command(), "unknown log level '" + level + "' (error, warn, info, debug, off)");
}

aotrun_mode mode_option(const Args& args, const std::string& option, const std::string& also) {
  const std::string text = args.get(option, "threaded");
  const auto mode = parse_mode(text);
  if (!mode) {
    throw UsageError(args.command(), "unknown " + std::string(option == "mode" ? "mode" : "--" + option) + " '" + text +
                                         "' (threaded, single_threaded, graph" + also + ")");
  }
  return *mode;
}

}  // namespace aotrun::cli
