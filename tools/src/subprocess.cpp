#include "subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "error.hpp"

namespace aotrun::cli {

namespace {

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Live children's process groups, for kill_all_children (a signal handler).
constexpr int kMaxChildren = 1024;
std::atomic<pid_t> g_groups[kMaxChildren];

void remember(pid_t pid) {
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}

void forget(pid_t pid) {
  for (auto& slot : g_groups) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void on_signal(int sig) {
  kill_all_children();
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void kill_all_children() {
  for (auto& slot : g_groups) {
    const pid_t pid = slot.load();
    if (pid > 0) kill(-pid, SIGKILL);
  }
}

void install_child_reaper() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    throw Failure("IO_ERROR", std::string("cannot find this program (/proc/self/exe): ") + std::strerror(errno));
  return std::string(buf, static_cast<size_t>(n));
}

Child::Child(const std::vector<std::string>& argv, double timeout_s, size_t out_limit, size_t err_limit)
    : timeout_s_(timeout_s), out_limit_(out_limit), err_limit_(err_limit) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) throw Failure("IO_ERROR", std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    throw Failure("IO_ERROR", std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  start_ = now_s();
  pid_ = fork();
  if (pid_ < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    throw Failure("IO_ERROR", std::string("fork: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaction(sig, &sa, nullptr);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execv(args[0], args.data());
    const char msg[] = "aotrun compat: exec failed\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)ignored;
    _exit(127);
  }
  setpgid(pid_, pid_);  // also here: no race with a kill before the child ran
  remember(pid_);
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(err_fd_, F_SETFL, fcntl(err_fd_, F_GETFL) | O_NONBLOCK);
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (pid_ > 0) forget(pid_);
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void Child::drain(int& fd, bool is_err) {
  if (fd < 0) return;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n > 0) {
      if (is_err) {
        result_.err_bytes += static_cast<size_t>(n);
        result_.err_tail.append(buf, static_cast<size_t>(n));
        if (result_.err_tail.size() > 2 * err_limit_) {
          result_.err_tail.erase(0, result_.err_tail.size() - err_limit_);
        }
      } else if (result_.out.size() < out_limit_) {
        result_.out.append(buf, std::min(static_cast<size_t>(n), out_limit_ - result_.out.size()));
      }
      continue;
    }
    if (n < 0 && (errno == EINTR)) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close(fd);  // end of file, or an error: nothing more comes
    fd = -1;
    return;
  }
}

std::vector<int> Child::fds() const {
  std::vector<int> out;
  if (out_fd_ >= 0) out.push_back(out_fd_);
  if (err_fd_ >= 0) out.push_back(err_fd_);
  return out;
}

double Child::remaining_s() const {
  const double left = start_ + timeout_s_ - now_s();
  return left > 0 ? left : 0;
}

bool Child::poll() {
  if (done_) return true;
  drain(out_fd_, false);
  drain(err_fd_, true);
  if (!reaped_) {
    const pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      result_.wall_s = now_s() - start_;
      // Whatever it left running in its group goes with it.
      kill(-pid_, SIGKILL);
    } else if (remaining_s() <= 0) {
      result_.timed_out = true;
      kill(-pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      reaped_ = true;
      result_.wall_s = now_s() - start_;
    }
  }
  if (reaped_) {
    // The pipes close once every process of the group is gone; a grandchild
    // that escaped the group could keep them open, so read what is there
    // and stop.
    drain(out_fd_, false);
    drain(err_fd_, true);
    if (out_fd_ >= 0) {
      close(out_fd_);
      out_fd_ = -1;
    }
    if (err_fd_ >= 0) {
      close(err_fd_);
      err_fd_ = -1;
    }
    if (result_.err_tail.size() > err_limit_) result_.err_tail.erase(0, result_.err_tail.size() - err_limit_);
    if (WIFEXITED(status_)) {
      result_.exited = true;
      result_.exit_code = WEXITSTATUS(status_);
    } else if (WIFSIGNALED(status_)) {
      result_.signal = WTERMSIG(status_);
    }
    forget(pid_);
    done_ = true;
  }
  return done_;
}

}  // namespace aotrun::cli
