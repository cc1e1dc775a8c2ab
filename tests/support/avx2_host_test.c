/* Run with avx2_host.c's library preloaded (ctest sets LD_PRELOAD; without
 * cpuid faulting the library exits 77 first and ctest reports a skip).
 * Checks that the process sees an AVX2-only CPU everywhere it can ask, and
 * that real faults still reach the program's own SIGSEGV handling. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                       \
  do {                                         \
    if (!(cond)) {                             \
      fprintf(stderr, "FAILED: " __VA_ARGS__); \
      fputc('\n', stderr);                     \
      ++failures;                              \
    }                                          \
  } while (0)

/* What /proc/cpuinfo says the host has: the kernel's view, not ours. */
static int host_has(const char* flag) {
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return -1;
  char line[8192];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    char* tok = strtok(strchr(line, ':') + 1, " \n");
    for (; tok; tok = strtok(NULL, " \n")) found |= strcmp(tok, flag) == 0;
    break;
  }
  fclose(f);
  return found;
}

/* 1 when cpuid leaf 7 reports no AVX-512 / AMX and keeps AVX2 as the host has it. */
static int cpuid_says_avx2_only(void) {
  unsigned a, b, c, d;
  __cpuid_count(7, 0, a, b, c, d);
  int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
  int amx_tile = (d >> 24) & 1, avx2 = (b >> 5) & 1;
  return !avx512f && !avx512bw && !avx512vl && !amx_tile && avx2 == host_has("avx2");
}

static void* thread_view(void* out) {
  *(int*)out = cpuid_says_avx2_only();
  return NULL;
}

static sigjmp_buf back;
static volatile sig_atomic_t faults_seen;
static void program_handler(int sig) {
  (void)sig;
  ++faults_seen;
  siglongjmp(back, 1);
}

int main(void) {
  const char* preload = getenv("LD_PRELOAD");
  if (!preload || !strstr(preload, "avx2_host")) {
    fprintf(stderr, "avx2_host_test: run me with the avx2_host library in LD_PRELOAD (ctest does)\n");
    return 1;
  }
  CHECK(host_has("avx2") == 1, "the host has no AVX2; the library presents AVX2 hosts only");
  CHECK(cpuid_says_avx2_only(), "cpuid on the main thread still reports AVX-512/AMX (or lost AVX2)");
  CHECK(!__builtin_cpu_supports("avx512f"), "__builtin_cpu_supports(\"avx512f\") is true");
  CHECK(__builtin_cpu_supports("avx2"), "__builtin_cpu_supports(\"avx2\") is false");
  unsigned a, b, c, d;
  __cpuid_count(7, 1, a, b, c, d);
  CHECK(!((a >> 4) & 1) && !((a >> 5) & 1), "cpuid 7.1 still reports AVX-VNNI or AVX512-BF16");
  __cpuid(0, a, b, c, d);
  CHECK(a >= 7, "cpuid leaf 0 reports max leaf %u (vendor leaves must pass through)", a);

  int in_thread = 0;
  pthread_t t;
  pthread_create(&t, NULL, thread_view, &in_thread);
  pthread_join(t, NULL);
  CHECK(in_thread, "cpuid on a new thread still reports AVX-512/AMX");

  /* The program's own handler, installed after the library's, gets real
   * faults; cpuid stays masked with it installed. */
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = program_handler;
  sigemptyset(&act.sa_mask);
  CHECK(sigaction(SIGSEGV, &act, &old) == 0, "sigaction(SIGSEGV) failed");
  CHECK(cpuid_says_avx2_only(), "cpuid is unmasked after the program installed a SIGSEGV handler");
  long page = sysconf(_SC_PAGESIZE);
  volatile char* guard = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(guard != MAP_FAILED, "mmap failed");
  if (sigsetjmp(back, 1) == 0) guard[0] = 1;
  CHECK(faults_seen == 1, "the program's SIGSEGV handler saw %d faults, expected 1", (int)faults_seen);
  struct sigaction current;
  CHECK(sigaction(SIGSEGV, NULL, &current) == 0 && current.sa_handler == program_handler,
        "sigaction does not report the program's handler back");
  CHECK(signal(SIGSEGV, SIG_DFL) == program_handler, "signal() does not return the previous handler");

  /* A fork()ed child keeps the mask, and with the default disposition a real
   * fault still kills it by SIGSEGV (no loop, no hang). */
  pid_t child = fork();
  if (child == 0) {
    if (!cpuid_says_avx2_only()) _exit(3);
    guard[0] = 1;
    _exit(4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 3), "cpuid is unmasked in a fork()ed child");
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
        "a fault in the child did not end it by SIGSEGV (status %#x)", status);

  /* raise(SIGSEGV) with the default disposition ends the process too. */
  child = fork();
  if (child == 0) {
    raise(SIGSEGV);
    _exit(5);
  }
  waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "raise(SIGSEGV) did not end the child (status %#x)",
        status);

  munmap((void*)guard, (size_t)page);
  if (failures) return 1;
  puts("avx2_host: cpuid reports an AVX2-only CPU on every thread and in children; faults reach the program");
  return 0;
}
