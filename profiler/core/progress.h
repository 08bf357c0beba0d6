// Progress of long work (merge, analysis, trace writing) for whoever shows
// it. The libraries report (stage, done, total); the CLI installs a sink that
// draws one line on a terminal (cli/progress_line.cpp). Without a sink —
// tests, pipes, the tuner's children — a report costs a load and a branch.
#pragma once

#include <cstdint>
#include <string_view>

namespace ddpscope::core::progress {

// `total` 0: unknown. A sink must be cheap or rate-limit itself.
using Sink = void (*)(std::string_view stage, uint64_t done, uint64_t total);

void set_sink(Sink sink);  // nullptr: nobody watches
void update(std::string_view stage, uint64_t done, uint64_t total);
void finish();  // the work is over: a sink clears its line (update with total 0 and done 0)

// Keeps this thread's reports from the sink while it lives: work done beside
// the job (record's live view analyses a window every second) is not the
// long work a user waits on, and its line would land amid the job's output.
class Silence {
 public:
  Silence();
  ~Silence();
  Silence(const Silence&) = delete;
  Silence& operator=(const Silence&) = delete;

 private:
  bool was_;
};

// For loops over many rows: reports the first tick (the stage began), then
// every 65,536.
class Counter {
 public:
  Counter(std::string_view stage, uint64_t total) : stage_(stage), total_(total) {}
  void tick() {
    if ((++done_ & 0xFFFF) == 0 || done_ == 1) update(stage_, done_, total_);
  }

 private:
  std::string_view stage_;
  uint64_t total_, done_ = 0;
};

}  // namespace ddpscope::core::progress
