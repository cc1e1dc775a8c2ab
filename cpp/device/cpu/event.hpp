// A CPU event: a point in one stream. Complete when the stream has executed
// everything enqueued before the record (immediately on inline streams).
#pragma once

#include <memory>
#include <mutex>

#include "device/cpu/stream.hpp"

namespace aotrun::cpu {

class Event {
 public:
  // Called through the host services, which check the capture rules first.
  void record(Stream* stream) {
    std::lock_guard<std::mutex> lock(mu_);
    stream_ = stream;
    point_ = stream->mark();
    captured_in_ = 0;
  }
  // Recorded into a capturing stream: orders captured work only, and makes
  // the event a captured event (capture.hpp) until recorded again eagerly.
  void record_in_capture(uint64_t capture_id) {
    std::lock_guard<std::mutex> lock(mu_);
    captured_in_ = capture_id;
  }
  uint64_t captured_in() {
    std::lock_guard<std::mutex> lock(mu_);
    return captured_in_;
  }
  bool query() {
    std::lock_guard<std::mutex> lock(mu_);
    return stream_ == nullptr || stream_->reached(point_);
  }
  Status synchronize() {
    Stream* s;
    uint64_t p;
    {
      std::lock_guard<std::mutex> lock(mu_);
      s = stream_;
      p = point_;
    }
    return s != nullptr ? s->wait(p) : Status::Ok();
  }

 private:
  std::mutex mu_;
  Stream* stream_ = nullptr;  // streams outlive the containers that record on them
  uint64_t point_ = 0;
  uint64_t captured_in_ = 0;  // capture id of the last record, 0 if eager
};

}  // namespace aotrun::cpu
