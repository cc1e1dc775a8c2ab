// Events recorded into a capturing CPU stream behave as CUDA's do. The table
// is what an H100 answered (CUDA 13.0, driver 580.159):
//
//   mode          query thread   query in capture         end capture   query after end
//   global        same / other   cudaErrorCapturedEvent   invalidated   cudaErrorInvalidValue
//   thread-local  same / other   cudaErrorCapturedEvent   invalidated   cudaErrorInvalidValue
//   relaxed       same / other   cudaErrorCapturedEvent   invalidated   cudaErrorInvalidValue
//   (no query)                                            ok            cudaErrorInvalidValue
//
// and recording the event again outside a capture makes it usable. The same
// table runs against CUDA in tests/gpu/cuda_backend_test.cpp.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "device/cpu/host_services.hpp"

namespace aotrun::cpu {
namespace {

struct Fixture {
  Stream stream{Stream::Kind::Inline};
  Stream other{Stream::Kind::Inline};
  HostContext ctx;
  aotrun_pkg_host host{};
  aotrun_pkg_event ev = nullptr;
  Fixture() {
    ctx.default_stream = &stream;
    ctx.package_name = "captured_event_test";
    host = make_host_services(&ctx);
    EXPECT_EQ(host.event_create(host.host_ctx, &ev), AOTRUN_PKG_OK);
  }
  ~Fixture() { host.event_destroy(host.host_ctx, ev); }
  int32_t query_on(bool other_thread) {
    int32_t rc = -1;
    if (other_thread) {
      std::thread t([&] { rc = host.event_query(host.host_ctx, ev); });
      t.join();
    } else {
      rc = host.event_query(host.host_ctx, ev);
    }
    return rc;
  }
};

struct Case {
  CaptureMode mode;
  bool other_thread;
};

class CapturedEvent : public testing::TestWithParam<Case> {};

TEST_P(CapturedEvent, QueryFailsInCaptureInvalidatesItAndLeavesTheEventInvalid) {
  Fixture f;
  ASSERT_TRUE(f.stream.begin_capture(GetParam().mode).ok());
  ASSERT_EQ(f.host.event_record(f.host.host_ctx, f.ev, &f.stream), AOTRUN_PKG_OK);
  EXPECT_EQ(f.query_on(GetParam().other_thread), AOTRUN_PKG_ERR_CAPTURE_UNSUPPORTED);
  std::unique_ptr<Graph> g;
  const Status end = f.stream.end_capture(&g);
  EXPECT_EQ(end.code, Code::CaptureInvalidated) << end.message;
  EXPECT_NE(end.message.find("event_query"), std::string::npos) << end.message;
  EXPECT_EQ(f.host.event_query(f.host.host_ctx, f.ev), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(f.host.event_synchronize(f.host.host_ctx, f.ev), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
  // Recorded again outside a capture (on another stream): usable again.
  ASSERT_EQ(f.host.event_record(f.host.host_ctx, f.ev, &f.other), AOTRUN_PKG_OK);
  EXPECT_EQ(f.host.event_query(f.host.host_ctx, f.ev), AOTRUN_PKG_OK);
  EXPECT_EQ(f.host.event_synchronize(f.host.host_ctx, f.ev), AOTRUN_PKG_OK);
}

INSTANTIATE_TEST_SUITE_P(AllModes, CapturedEvent,
                         testing::Values(Case{CaptureMode::Global, false}, Case{CaptureMode::Global, true},
                                         Case{CaptureMode::ThreadLocal, false}, Case{CaptureMode::ThreadLocal, true},
                                         Case{CaptureMode::Relaxed, false}, Case{CaptureMode::Relaxed, true}),
                         [](const testing::TestParamInfo<Case>& i) {
                           const char* m = i.param.mode == CaptureMode::Global        ? "global"
                                           : i.param.mode == CaptureMode::ThreadLocal ? "thread_local"
                                                                                      : "relaxed";
                           return std::string(m) + (i.param.other_thread ? "_other_thread" : "_same_thread");
                         });

TEST(CapturedEvent, AfterACleanCaptureTheEventIsInvalidUntilRecordedAgain) {
  for (CaptureMode mode : {CaptureMode::Relaxed, CaptureMode::ThreadLocal}) {
    Fixture f;
    ASSERT_TRUE(f.stream.begin_capture(mode).ok());
    ASSERT_EQ(f.host.event_record(f.host.host_ctx, f.ev, &f.stream), AOTRUN_PKG_OK);
    std::unique_ptr<Graph> g;
    ASSERT_TRUE(f.stream.end_capture(&g).ok());
    EXPECT_EQ(f.host.event_query(f.host.host_ctx, f.ev), AOTRUN_PKG_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(f.host.event_record(f.host.host_ctx, f.ev, &f.stream), AOTRUN_PKG_OK);
    EXPECT_EQ(f.host.event_query(f.host.host_ctx, f.ev), AOTRUN_PKG_OK);
  }
}

}  // namespace
}  // namespace aotrun::cpu
