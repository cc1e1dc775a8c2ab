/* avx2_host.c — LD_PRELOAD this library and the process sees an AVX2-only
 * x86-64 CPU: every `cpuid` it executes reports no AVX-512, AMX, AVX-VNNI or
 * AVX10, whatever the host has (issue #41: "the same answers on every
 * host", and ONNX Runtime measured on the AVX2 paths it would take there).
 *
 * Why: the environment switches (AOTRUN_SHIM_MAX_ISA, DNNL_MAX_CPU_ISA,
 * ATEN_CPU_CAPABILITY) cap the libraries that read them. Libraries that read
 * `cpuid` themselves and have no switch (ONNX Runtime's MLAS, Sleef's
 * dispatchers, OpenBLAS, libgcc's __builtin_cpu_supports) choose their
 * kernels by what `cpuid` says. With this library preloaded they all choose
 * what they would on an AVX2 host. Instruction support itself is unchanged:
 * code that uses AVX-512 without asking `cpuid` still runs it. glibc reads
 * `cpuid` before any preloaded constructor runs, so its own string
 * functions keep the host's choice (they return the same results).
 *
 * How: Linux's cpuid faulting (arch_prctl ARCH_SET_CPUID, 0; Intel CPUs since
 * Ivy Bridge expose it, also under KVM; AMD's do not). With it, `cpuid`
 * raises SIGSEGV in user space. The handler below executes the instruction
 * with faulting briefly off, clears the feature bits, writes the registers
 * back and steps over the two-byte opcode. The setting is per thread and
 * inherited by threads and fork()ed children; an exec()ed child gets it again
 * from LD_PRELOAD in its environment.
 *
 * Where faulting is not available (AMD hosts, old kernels) the constructor
 * prints why and exits the process with status 77, so a test run under it is
 * reported as skipped (ctest SKIP_RETURN_CODE 77) rather than passing on the
 * AVX-512 paths it was meant to avoid.
 *
 * SIGSEGV stays ours: a handler the program installs later (sigaction or
 * signal) is recorded and called for every fault that is not a `cpuid`, so
 * crash reporters (Python's faulthandler, Rust's stack-overflow guard) keep
 * working. Not for sanitizer builds (they want to be the first preload).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static int set_cpuid_enabled(int on) { return (int)syscall(SYS_arch_prctl, ARCH_SET_CPUID, (unsigned long)on); }

static void say(const char* msg) {
  ssize_t ignored = write(2, msg, strlen(msg));
  (void)ignored;
}

/* Leaf 7, sub-leaf 0: EBX AVX512F(16) DQ(17) IFMA(21) PF(26) ER(27) CD(28)
 * BW(30) VL(31); ECX VBMI(1) VBMI2(6) VNNI(11) BITALG(12) VPOPCNTDQ(14);
 * EDX 4VNNIW(2) 4FMAPS(3) VP2INTERSECT(8) AMX-BF16(22) FP16(23) AMX-TILE(24)
 * AMX-INT8(25). Sub-leaf 1: EAX AVX-VNNI(4) AVX512-BF16(5) AMX-FP16(21)
 * AVX-IFMA(23); EDX AVX10(19). Leaf 0x24 (AVX10) reads as zero. */
static void mask_features(unsigned leaf, unsigned sub, unsigned* a, unsigned* b, unsigned* c, unsigned* d) {
  if (leaf == 7 && sub == 0) {
    *b &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
    *c &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
    *d &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25));
  } else if (leaf == 7 && sub == 1) {
    *a &= ~((1u << 4) | (1u << 5) | (1u << 21) | (1u << 23));
    *d &= ~(1u << 19);
  } else if (leaf == 0x24) {
    *a = *b = *c = *d = 0;
  }
}

/* The program's own SIGSEGV disposition, called for faults that are not ours. */
static struct sigaction program_action;
static int (*real_sigaction)(int, const struct sigaction*, struct sigaction*);

static void forward_fault(int sig, siginfo_t* info, void* context) {
  if ((program_action.sa_flags & SA_SIGINFO) && program_action.sa_sigaction) {
    program_action.sa_sigaction(sig, info, context);
    return;
  }
  if (program_action.sa_handler != SIG_DFL && program_action.sa_handler != SIG_IGN) {
    program_action.sa_handler(sig);
    return;
  }
  /* Default action: restore it; the faulting instruction runs again and the
   * process dies of SIGSEGV as it would have without this library. A signal
   * sent rather than raised by a fault (kill, raise: si_code <= 0) does not
   * come back by itself, so it is sent again. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  real_sigaction(SIGSEGV, &dfl, NULL);
  if (info->si_code <= 0) raise(SIGSEGV);
}

static void on_segv(int sig, siginfo_t* info, void* context) {
  ucontext_t* uc = (ucontext_t*)context;
  greg_t* regs = uc->uc_mcontext.gregs;
  const unsigned char* ip = (const unsigned char*)regs[REG_RIP];
  /* A faulting cpuid is a SIGSEGV with si_code SI_KERNEL at the instruction. */
  if (info->si_code != SI_KERNEL || ip == NULL || ip[0] != 0x0f || ip[1] != 0xa2) {
    forward_fault(sig, info, context);
    return;
  }
  unsigned leaf = (unsigned)regs[REG_RAX], sub = (unsigned)regs[REG_RCX];
  unsigned a, b, c, d;
  set_cpuid_enabled(1);
  __cpuid_count(leaf, sub, a, b, c, d);
  set_cpuid_enabled(0);
  mask_features(leaf, sub, &a, &b, &c, &d);
  regs[REG_RAX] = a;
  regs[REG_RBX] = b;
  regs[REG_RCX] = c;
  regs[REG_RDX] = d;
  regs[REG_RIP] += 2;
}

/* Interposed so that a SIGSEGV handler installed after ours is chained
 * behind it instead of replacing it. Other signals pass straight through. */
int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  if (sig != SIGSEGV) return real_sigaction(sig, act, old);
  if (old) *old = program_action;
  if (act) program_action = *act;
  return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

__attribute__((constructor)) static void start_as_avx2_host(void) {
  real_sigaction = (int (*)(int, const struct sigaction*, struct sigaction*))dlsym(RTLD_NEXT, "sigaction");
  if (!real_sigaction) {
    say("avx2_host: dlsym(sigaction) failed; exiting 77 (skipped)\n");
    _exit(77);
  }
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = on_segv;
  act.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&act.sa_mask);
  real_sigaction(SIGSEGV, &act, &program_action);
  if (set_cpuid_enabled(0) != 0) {
    say("avx2_host: this CPU or kernel has no cpuid faulting (arch_prctl ARCH_SET_CPUID; AMD CPUs lack it), "
        "so an AVX2-only host cannot be presented; exiting 77 (skipped)\n");
    _exit(77);
  }
}
