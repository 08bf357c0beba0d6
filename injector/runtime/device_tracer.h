// GPU activity tracing (CUPTI) as the runtime and the NCCL hooks see it: no
// CUDA or CUPTI header here (the Kineto way: one seam, a CPU-only build gets
// no tracer). The implementation lives in injector/cupti/.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/core/records.h"

namespace ddpscope::inject {

// CUPTI's correlation id of an API call, tied to the external id we pushed
// around it (our collective's or group's correlation, see event.h).
struct ExternalLink {
  uint32_t correlation = 0;
  uint64_t external = 0;
};

// What the tracer hands the writer thread: GPU activities with times on our
// monotonic clock (KernelRecord::correlation is CUPTI's), and the links.
struct ActivityBatch {
  std::vector<KernelRecord> kernels;
  std::vector<ExternalLink> links;
  uint64_t dropped = 0;      // records CUPTI could not store (buffers full)
  uint64_t overhead_ns = 0;  // CUPTI's own overhead records, summed
  void clear() {
    kernels.clear();
    links.clear();
    dropped = overhead_ns = 0;
  }
};

class DeviceTracer {
 public:
  virtual ~DeviceTracer() = default;
  // Hot path (app threads): bracket an NCCL call, or a group's launch at
  // ncclGroupEnd, so its kernels carry our id.
  virtual void push_correlation(uint64_t external) = 0;
  virtual void pop_correlation() = 0;
  // Writer thread: has CUPTI hand over completed records, then moves what the
  // buffer callbacks converted into `out`. Never called with our locks held.
  virtual void collect(ActivityBatch& out) = 0;
  // Writer thread, at the end: stop tracing (after a last collect).
  virtual void stop() = 0;
};

// Starts tracing once, at the first NCCL use (lazily: after DataLoader forks,
// and once the job itself has loaded the CUDA driver). Cheap after the first
// call. Without CUPTI, a driver or DDPSCOPE_CUPTI=1, says why once and leaves
// device_tracer() null, so collectives keep event or host timing.
void start_device_tracer();

// Hot path: the running tracer, or null.
DeviceTracer* device_tracer();

// Our external correlation ids: process-unique, never 0.
uint32_t next_correlation();

}  // namespace ddpscope::inject
