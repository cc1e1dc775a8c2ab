// Running a child process with a wall-clock limit, for `aotrun compat`: each
// package is opened and run in a child of its own, so that one that crashes,
// hangs or aborts ends only that child.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace aotrun::cli {

struct ChildResult {
  std::string out;       // all of stdout (up to a limit, then cut)
  std::string err_tail;  // the last err_limit bytes of stderr
  size_t err_bytes = 0;  // everything the child wrote to stderr
  bool exited = false;   // exited normally: exit_code is valid
  int exit_code = -1;
  int signal = 0;          // the signal that ended it (timed out: SIGKILL)
  bool timed_out = false;  // killed by us at the time limit
  double wall_s = 0;
};

// A child started with fork + exec: its own process group (killed as a whole
// at the time limit), stdin from /dev/null, stdout and stderr read by us.
class Child {
 public:
  Child(const std::vector<std::string>& argv, double timeout_s, size_t out_limit, size_t err_limit);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Reads what is available and reaps the child if it has ended; kills the
  // group once past the time limit. Returns true when it is done.
  bool poll();
  // File descriptors still open for reading (for poll(2)).
  std::vector<int> fds() const;
  // Seconds until the time limit (>= 0).
  double remaining_s() const;
  bool done() const { return done_; }
  const ChildResult& result() const { return result_; }
  pid_t pid() const { return pid_; }

 private:
  void drain(int& fd, bool is_err);
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  double start_ = 0, timeout_s_ = 0;
  size_t out_limit_, err_limit_;
  bool done_ = false, reaped_ = false;
  int status_ = 0;
  ChildResult result_;
};

// Kills the process groups of every live Child (SIGKILL); safe in a signal
// handler. Installed for SIGINT, SIGTERM and SIGHUP by install_child_reaper().
void kill_all_children();
void install_child_reaper();

// The path of this executable (/proc/self/exe), for re-executing it.
std::string self_executable();

}  // namespace aotrun::cli
