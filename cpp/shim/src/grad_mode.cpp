// Grad mode: a thread-local flag, enabled by default as in PyTorch. The shim
// has no autograd; models set it off around a run and the flag is only kept.
#include "aotrun_shim/shim.h"

namespace {
thread_local bool t_grad_enabled = true;
}

extern "C" {
bool aoti_torch_grad_mode_is_enabled(void) { return t_grad_enabled; }
void aoti_torch_grad_mode_set_enabled(bool enabled) { t_grad_enabled = enabled; }
}
