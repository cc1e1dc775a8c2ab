// The subcommands of the aotrun tool and what they share.
//
// Each command parses argv[begin, argc) itself, writes its report to stdout,
// and returns the process exit code; errors are thrown (see error.h).
#pragma once

#include <vector>

#include <aotrun/aotrun.h>

#include "args.hpp"

namespace aotrun::cli {

int inspect_main(int argc, char** argv, int begin);
int run_main(int argc, char** argv, int begin);
int bench_main(int argc, char** argv, int begin);
int check_main(int argc, char** argv, int begin);
int compat_main(int argc, char** argv, int begin);
// The child process of `compat` (one package); not listed in the help.
int compat_one_main(int argc, char** argv, int begin);

// Options every subcommand accepts: --help, --log LEVEL, --no-verify.
std::vector<OptionSpec> common_options();
// Applies --log (if given) to the library's log level; UsageError on an
// unknown level name.
void apply_log_option(const Args& args);

// Parses the runner mode given with --`option` (default threaded);
// UsageError on an unknown name. `also` lists other names the caller
// handles itself, for the message (", async").
aotrun_mode mode_option(const Args& args, const std::string& option = "mode", const std::string& also = "");

}  // namespace aotrun::cli
