// One rank's output file as the writer thread sees it: events drained from the
// rings are converted to store records by their source (source.h), the
// communication pipeline times and links collectives (device timers, CUPTI
// kernels), and each flush commits in one transaction.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "injector/runtime/comm_events.h"
#include "injector/runtime/device_tracer.h"
#include "injector/runtime/event.h"
#include "injector/runtime/identity.h"
#include "injector/runtime/kernel_linker.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"
#include "profiler/core/records.h"

namespace ddpscope::inject {

class BufferRegistry;

// Monotonic ns at which the injector was loaded (processes.start_ns).
extern int64_t g_load_ns;

class RankFile : public Rows {
 public:
  RankFile(std::string out_dir, BufferRegistry* buffers);
  ~RankFile() override;
  void flush(bool final);
  void close();

  // Rows: the communication pipeline.
  void collective(const CollectiveRecord& r, uint32_t timer, uint32_t correlation) override;
  void collective_begin(const CollectiveRecord& r) override;
  void comm_begin(const CommRecord& r) override;
  void comm_end(const CommEndEvent& e) override;
  int64_t to_ns(uint64_t ticks) const override { return ticks_.to_ns(ticks); }

 private:
  struct Timed {
    CollectiveRecord record;
    uint32_t timer;
  };
  void convert(const Event& e);
  void resolve_timers(bool final);
  void collect_activities(bool final);
  void write_collective(CollectiveRecord& c);
  std::vector<InflightRecord> inflight() const;
  void write_resolutions();
  void write_counts();
  template <typename Record>
  void write_rows(std::vector<Record>& rows);
  bool open();
  void write();
  void fail(const char* what);
  void stop_recording();

  std::string out_dir_;
  BufferRegistry* buffers_;
  clock::TickConverter ticks_;
  Identity id_;
  // Read once at open: the meta row and every flush's processes row say the same.
  std::string host_;
  std::unique_ptr<store::RankWriter> writer_;
  bool failed_ = false;
  bool final_ = false;  // the flush under way is the last (processes.finalized)
  std::vector<CommRecord> comms_;
  std::vector<CommEndEvent> ends_;  // times already in ns
  std::vector<CollectiveRecord> ready_;
  std::vector<Timed> timed_;
  // Collectives entered and not returned (Gloo), by (thread, communicator, seq).
  std::map<std::tuple<uint32_t, uint64_t, uint64_t>, CollectiveRecord> entered_;
  bool inflight_written_ = false;  // the file lists some: the next flush must update it
  // GPU activities (CUPTI), when tracing runs.
  KernelLinker linker_;
  ActivityBatch batch_;
  std::vector<LinkedGroup> linked_;
  std::vector<KernelRecord> kernels_;
  uint64_t cupti_dropped_ = 0, cupti_overhead_ns_ = 0;
  int64_t next_collective_id_ = 1;  // ids are ours, so kernels can name them
  int resolutions_written_ = 0;
};

}  // namespace ddpscope::inject
