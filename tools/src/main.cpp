// aotrun — command line for aotrun packages: global options, subcommand
// dispatch, and the one place where errors become messages and exit codes.
#include <iostream>
#include <new>
#include <string>

#include <aotrun/aotrun.hpp>

#include "args.hpp"
#include "commands.hpp"
#include "error.hpp"

namespace aotrun::cli {
namespace {

const char kHelp[] =
    "Usage: aotrun [--log LEVEL] COMMAND [OPTIONS] PKG\n"
    "\n"
    "Inspect, run and benchmark aotrun model packages (a package directory with\n"
    "manifest.json, or a bare shared library) and PyTorch AOTInductor .pt2\n"
    "archives.\n"
    "\n"
    "Commands:\n"
    "  inspect   describe a package: ABI, symbols, modes, inputs, outputs, timings\n"
    "  run       run a package once on random or .npy inputs and summarise outputs\n"
    "  bench     measure latency and throughput (synchronous or asynchronous runs)\n"
    "  check     compare outputs of every run mode bit for bit (and with saved\n"
    "            reference outputs, within a tolerance)\n"
    "  compat    sweep packages (.pt2, .so, directories): each in a child process\n"
    "            with a time limit, every mode against reference outputs\n"
    "  help CMD  show the help of CMD\n"
    "\n"
    "Global options:\n"
    "  --log LEVEL   library log level: error, warn, info, debug, off\n"
    "                (default: the AOTRUN_LOG environment variable, else warn)\n"
    "  --version     print the versions of the tool and the loaded library\n"
    "  -h, --help    show this help\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  the package, the runtime or a named file failed, or 'check' found\n"
    "     differing outputs, or 'compat' found a package that did not meet its\n"
    "     expectation; stderr says \"aotrun: <CODE>: <message>\" with CODE\n"
    "     such as NOT_FOUND, UNSUPPORTED, MISMATCH or COMPAT_FAILED\n"
    "  2  usage error (unknown command or option, bad option value)\n"
    "\n"
    "Run 'aotrun COMMAND --help' for the options of a command.\n";

using CommandFn = int (*)(int, char**, int);

CommandFn find_command(const std::string& name) {
  if (name == "inspect") return inspect_main;
  if (name == "run") return run_main;
  if (name == "bench") return bench_main;
  if (name == "check") return check_main;
  if (name == "compat") return compat_main;
  if (name == "compat-one") return compat_one_main;
  return nullptr;
}

int dispatch(int argc, char** argv) {
  // Global options come before the command; the command parses the rest.
  const std::vector<OptionSpec> specs = {{"help", false, true}, {"log", true, false}, {"version", false, false}};
  int i = argc;
  const Args global = Args::parse_leading("", specs, argc, argv, 1, &i);
  apply_log_option(global);
  if (global.has("version")) {
    std::cout << "aotrun " << AOTRUN_VERSION_MAJOR << "." << AOTRUN_VERSION_MINOR << "." << AOTRUN_VERSION_PATCH
              << " (library " << aotrun_version_string() << ")\n";
    return kExitOk;
  }
  if (global.has("help")) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (i >= argc) throw UsageError("", "missing command (inspect, run, bench, check or compat)");
  const std::string command = argv[i];
  if (command == "help") {
    if (i + 1 >= argc) {
      std::cout << kHelp;
      return kExitOk;
    }
    CommandFn fn = find_command(argv[i + 1]);
    if (fn == nullptr) throw UsageError("", "unknown command '" + std::string(argv[i + 1]) + "'");
    char help_flag[] = "--help";
    char* help_argv[] = {argv[0], help_flag};
    return fn(2, help_argv, 1);
  }
  CommandFn fn = find_command(command);
  if (fn == nullptr) throw UsageError("", "unknown command '" + command + "'");
  return fn(argc, argv, i + 1);
}

}  // namespace
}  // namespace aotrun::cli

int main(int argc, char** argv) {
  using namespace aotrun::cli;
  try {
    return dispatch(argc, argv);
  } catch (const UsageError& e) {
    const std::string who = e.command().empty() ? "aotrun" : "aotrun " + e.command();
    std::cerr << who << ": " << e.what() << "\nTry '" << who << " --help' for more information.\n";
    return kExitUsage;
  } catch (const Failure& e) {
    std::cerr << "aotrun: " << e.code_name() << ": " << e.what() << '\n';
    return kExitFailure;
  } catch (const aotrun::cxx::Error& e) {  // a library call through aotrun.hpp: same as Failure
    std::cerr << "aotrun: " << e.code_name() << ": " << e.what() << '\n';
    return kExitFailure;
  } catch (const std::bad_alloc&) {
    std::cerr << "aotrun: " << aotrun_code_name(AOTRUN_ERR_OUT_OF_MEMORY) << ": out of memory\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "aotrun: " << aotrun_code_name(AOTRUN_ERR_INTERNAL) << ": " << e.what() << '\n';
    return kExitFailure;
  }
}
