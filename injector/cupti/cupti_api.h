// CuptiActivityApi: the one class that calls CUPTI (the Kineto way). CUPTI is
// not linked: the job may have none. We find the copy the job's torch loaded
// (pip wheels load it RTLD_LOCAL), else the toolkit's, and resolve each entry
// point by name, so a missing one is an error message, not a crash.
#pragma once

#include <cupti_activity.h>

#include <string>

namespace ddpscope::inject::cupti {

class CuptiActivityApi {
 public:
  // Loads libcupti; false with `error()` set when it cannot be found or lacks
  // an entry point we need.
  bool load();
  const std::string& error() const { return error_; }
  const std::string& library() const { return library_; }

  // Our clock for CUPTI's timestamps; false if this CUPTI cannot take it.
  bool use_timestamps(CUpti_TimestampCallbackFunc now);
  bool register_buffers(CUpti_BuffersCallbackRequestFunc requested,
                        CUpti_BuffersCallbackCompleteFunc completed);
  // Enables every kind we record; false (all disabled again) on any failure.
  bool enable_activities();
  void disable_activities();

  // Hot path.
  void push_external(uint64_t id);
  void pop_external();

  void flush_all(bool forced);
  bool next_record(uint8_t* buffer, size_t valid, CUpti_Activity** record);
  uint64_t dropped(CUcontext ctx, uint32_t stream);
  uint64_t timestamp();  // CUPTI's clock, for the offset when our clock is refused
  std::string result_text(CUptiResult r);

 private:
  struct Fns;
  Fns* fn_ = nullptr;
  std::string error_, library_;
};

}  // namespace ddpscope::inject::cupti
