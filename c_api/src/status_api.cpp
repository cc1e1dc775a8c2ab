#include "status.hpp"

namespace aotrun::capi {
namespace {
aotrun_status g_oom{AOTRUN_ERR_OUT_OF_MEMORY, "out of memory"};
}

aotrun_status* oom_status() noexcept { return &g_oom; }

aotrun_status* make_status(Code code, const std::string& message) noexcept {
  try {
    return new aotrun_status{static_cast<aotrun_code>(code), message};
  } catch (...) {
    return oom_status();
  }
}

}  // namespace aotrun::capi

extern "C" {

aotrun_code aotrun_status_code(const aotrun_status* status) { return status ? status->code : AOTRUN_OK; }

const char* aotrun_status_message(const aotrun_status* status) { return status ? status->message.c_str() : ""; }

void aotrun_status_free(aotrun_status* status) {
  if (status != aotrun::capi::oom_status()) delete status;
}

const char* aotrun_code_name(aotrun_code code) {
  return aotrun::code_name(static_cast<aotrun::Code>(aotrun::capi::enum_value(code)));
}

uint32_t aotrun_version(void) { return AOTRUN_VERSION; }

const char* aotrun_version_string(void) {
#define AOTRUN_STR2(x) #x
#define AOTRUN_STR(x) AOTRUN_STR2(x)
  return AOTRUN_STR(AOTRUN_VERSION_MAJOR) "." AOTRUN_STR(AOTRUN_VERSION_MINOR) "." AOTRUN_STR(AOTRUN_VERSION_PATCH);
}

}  // extern "C"
