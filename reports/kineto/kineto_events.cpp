// One rank's Kineto trace: what each row of the run becomes in the layout
// libkineto's JSON output has (the PyTorch profiler's trace) and HTA reads.
//   - kernels, copies and sets: "kernel" / "gpu_memcpy" / "gpu_memset" on
//     pid = device, tid = stream, args device, stream, correlation;
//   - each distinct correlation id: one "cuda_runtime" launch on the host and
//     an "ac2g" flow from it to the kernel. ddpscope does not store launch
//     calls, so the launch of a collective's kernel is the NCCL call that
//     launched it, and a compute kernel's launch is an instant at the
//     kernel's start (the latest it can have been) on thread 0, named as such;
//   - collectives: a "cpu_op" `nccl:<op>` (or `gloo:<op>`) over the host call
//     with Kineto's collective args, which the comm kernels carry too; a
//     collective timed on the device without kernel rows (CUDA events, NCCL's
//     plugin) becomes one `ncclKernel_<op>` GPU event over that span;
//   - NVTX ranges: "user_annotation"; synchronising calls: "cuda_runtime";
//   - iterations: "user_annotation" `ProfilerStep#<index>` from the first
//     bucket's host call to the next iteration's, the last one to the rank's
//     last event (the way the profiler's last step runs until it stops).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "profiler/analysis/kernel_overlap.h"
#include "reports/kineto/kineto_json.h"
#include "reports/kineto/kineto_trace.h"
#include "reports/trace/json_text.h"
#include "reports/trace/trace_events.h"

namespace ddpscope::reports::kineto {
namespace {

using trace::number_arg;
using trace::text_arg;

// Above CUPTI's 32-bit correlation ids, so a made-up id never meets a real one.
constexpr uint64_t kFirstSyntheticCorrelation = uint64_t(1) << 40;
// The thread of launches whose thread is not recorded: no Linux thread has id 0.
constexpr int64_t kUnknownThread = 0;

// torch's names of the dtypes (c10::ScalarType), which Kineto's "dtype" carries.
std::string_view torch_dtype(Dtype d) {
  switch (d) {
    case Dtype::int8:
      return "Char";
    case Dtype::uint8:
      return "Byte";
    case Dtype::int32:
      return "Int";
    case Dtype::uint32:
      return "UInt32";
    case Dtype::int64:
      return "Long";
    case Dtype::uint64:
      return "UInt64";
    case Dtype::float16:
      return "Half";
    case Dtype::float32:
      return "Float";
    case Dtype::float64:
      return "Double";
    case Dtype::bfloat16:
      return "BFloat16";
    case Dtype::fp8e4m3:
      return "Float8_e4m3fn";
    case Dtype::fp8e5m2:
      return "Float8_e5m2";
    default:
      return name_of(d);  // unknown, or Gloo's bitsN
  }
}

// Kineto's "In msg nelems" / "Out msg nelems": elements of the input and the
// output tensor, from the API's count (docs/schema.md: per rank for the
// gathers and scatters, per peer for NCCL's all-to-all).
std::pair<uint64_t, uint64_t> msg_nelems(const CollectiveRecord& c, bool gloo) {
  uint64_t n = uint64_t(std::max(c.nranks, 1)), k = c.count;
  switch (facts_of(c.op).count) {
    case OpCount::input:
      return {k, k * n};
    case OpCount::output:
      return {k * n, k};
    case OpCount::per_peer:
      return gloo ? std::pair{k, k} : std::pair{k * n, k * n};
    case OpCount::buffer:
      break;
  }
  return {k, k};
}

// What a kernel's launch and args need of the collective it ran for.
struct Launcher {
  CollectiveRecord c;
  bool gloo = false;
};

bool is_copy(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), name.begin(),
                                                    [](char a, char b) { return a == (b | 0x20); });
}

class RankTrace {
 public:
  RankTrace(const ReportInput& in, const ProcessRecord& p, int64_t origin, std::ostream& os)
      : in_(in), p_(p), origin_(origin), out_(os, origin), backends_(in.reader) {
    host_pid_ = p.pid > 0 ? p.pid : (int64_t(1) << 22) + p.rank;  // above Linux's pid_max
    for (const auto& c : in.reader.comms())
      if (c.rank == p.rank && c.device >= 0) devices_[c.comm_id] = c.device;
  }

  void write() {
    header();
    collectives();
    kernels();
    host_spans();
    steps();
    names();
    out_.raw() += "\n  ],\n  \"traceName\": ";
    json_text::put(out_.raw(), "rank-" + std::to_string(p_.rank) + ".json");
    out_.raw() += "\n}\n";
    out_.flush();
  }

 private:
  // HTA finds the rank with the pattern `"rank":\s+(\d+)` on the first line
  // that has it: distributedInfo comes first, with the space.
  void header() {
    bool monotonic = in_.reader.timeline() == "monotonic";
    nlohmann::json ours = {{"run", in_.reader.path()},
                           {"timeline", in_.reader.timeline()},
                           {"origin_ns", std::to_string(origin_)}};
    out_.raw() += "{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": ";
    json_text::put(out_.raw(), name_of(p_.backend));
    out_.raw() += ", \"rank\": " + std::to_string(p_.rank) +
                  ", \"world_size\": " + std::to_string(p_.world_size) + "},\n";
    out_.raw() += "  \"deviceProperties\": [],\n  \"ddpscope\": " +
                  ours.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ",\n";
    out_.raw() += "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": " +
                  std::to_string(origin_ + (monotonic ? p_.clock_offset_ns : 0)) +
                  ",\n  \"traceEvents\": [";
  }

  // Host calls of every collective; device spans of those timed without
  // kernel rows; the launchers of the rest kept for their kernels.
  void collectives() {
    in_.reader.for_each_collective([&](const CollectiveRecord& c) { collective(c); },
                                   "rank = " + std::to_string(p_.rank));
  }

  void collective(const CollectiveRecord& c) {
    Launcher l{c, backends_.gloo(c)};
    if (step_tid_ < 0) step_tid_ = c.tid;
    if (c.host_start_ns != kNoTime) {
      collective_args(l);
      out_.complete("cpu_op", op_name(l), host_pid_, c.tid, c.host_start_ns, c.host_end_ns);
    }
    if (!l.gloo && analysis::device_span_without_kernels(c)) device_event(l);
    if (!l.gloo) launchers_.emplace(c.id, l);  // for its kernels, if it has some
  }

  void device_event(const Launcher& l) {
    const CollectiveRecord& c = l.c;
    auto d = devices_.find(c.comm_id);
    int64_t device = d != devices_.end() ? d->second : std::max(p_.device, 0);
    uint64_t correlation = next_synthetic_++;
    launch("cudaLaunchKernel", correlation, &l, c.start_ns);
    device_args(device, c.stream, correlation);
    collective_args(l);
    out_.arg(text_arg("timing", name_of(c.timing)));
    out_.complete("kernel", "ncclKernel_" + std::string(name_of(c.op)), device, int64_t(c.stream),
                  c.start_ns, c.end_ns);
    out_.flow('f', correlation, device, int64_t(c.stream), c.start_ns);
  }

  void kernels() {
    in_.reader.for_each<KernelRecord>(
        [&](const KernelRecord& k) { kernel(k); },
        "rank = " + std::to_string(p_.rank) + " AND start_ns IS NOT NULL");
  }

  void kernel(const KernelRecord& k) {
    const char* cat = "kernel";
    const char* api = "cudaLaunchKernel";
    std::string name = k.name;
    bool copy = k.kind == KernelKind::memcpy || is_copy(name, "memcpy");
    bool set = !copy && (k.kind == KernelKind::memset || is_copy(name, "memset"));
    if (copy) cat = "gpu_memcpy", api = "cudaMemcpyAsync";
    if (set) cat = "gpu_memset", api = "cudaMemsetAsync";
    // Kineto's (and HTA's) names of copies start with a capital: "Memcpy HtoD".
    if ((copy || set) && !name.empty())
      name[0] = char(toupper(static_cast<unsigned char>(name[0])));
    auto l = k.collective_id ? launchers_.find(k.collective_id) : launchers_.end();
    const Launcher* launcher = l != launchers_.end() ? &l->second : nullptr;
    uint64_t correlation = k.correlation ? k.correlation : next_synthetic_++;
    int64_t device = std::max(k.device, 0);
    // A graph launch runs many kernels under one correlation id: one launch.
    if (launched_.insert(correlation).second) launch(api, correlation, launcher, k.start_ns);
    device_args(device, k.stream, correlation);
    if (launcher) collective_args(*launcher);
    out_.complete(cat, name, device, int64_t(k.stream), k.start_ns, k.end_ns);
    out_.flow('f', correlation, device, int64_t(k.stream), k.start_ns);
  }

  // The launch of `correlation`: the collective's host call, or an instant at
  // `kernel_start` on the unknown thread.
  void launch(const char* api, uint64_t correlation, const Launcher* l, int64_t kernel_start) {
    bool known = l && l->c.host_start_ns != kNoTime;
    int64_t tid = known ? int64_t(l->c.tid) : kUnknownThread;
    int64_t start = known ? l->c.host_start_ns : kernel_start;
    out_.arg(number_arg("correlation", int64_t(correlation)));
    if (l) out_.arg(number_arg("External id", l->c.id));
    if (!known) out_.arg(text_arg("launch", "not recorded: placed at the kernel's start"));
    out_.complete("cuda_runtime", api, host_pid_, tid, start, known ? l->c.host_end_ns : start);
    out_.flow('s', correlation, host_pid_, tid, start);
  }

  void host_spans() {
    std::string rank = "rank = " + std::to_string(p_.rank) + " AND start_ns IS NOT NULL";
    in_.reader.for_each<RangeRecord>([&](const RangeRecord& r) { range(r); }, rank);
    in_.reader.for_each<SyncRecord>([&](const SyncRecord& s) { sync(s); }, rank);
  }

  void range(const RangeRecord& r) {
    if (!r.domain.empty()) out_.arg(text_arg("domain", r.domain));
    out_.complete("user_annotation", r.name, host_pid_, r.tid, r.start_ns, r.end_ns);
  }

  void sync(const SyncRecord& s) {
    out_.complete("cuda_runtime", name_of(s.call), host_pid_, s.tid, s.start_ns, s.end_ns);
  }

  void steps() {
    std::vector<const analysis::IterationStats*> mine;
    for (const auto& it : in_.run.iteration_list)
      if (it.rank == p_.rank) mine.push_back(&it);
    int64_t last = out_.last_end_ns();  // events below do not move the end of the last step
    for (size_t i = 0; i < mine.size(); ++i) {
      int64_t end = i + 1 < mine.size() ? mine[i + 1]->launch_ns : std::max(last, mine[i]->end_ns);
      out_.complete("user_annotation", "ProfilerStep#" + std::to_string(mine[i]->index), host_pid_,
                    std::max<int64_t>(step_tid_, kUnknownThread), mine[i]->launch_ns, end);
    }
  }

  // Names of the processes (host, GPUs) and threads (host threads, streams).
  void names() {
    out_.meta("process_name", host_pid_, 0,
              "rank " + std::to_string(p_.rank) + (p_.host.empty() ? "" : " (" + p_.host + ")"));
    for (auto [pid, tid] : out_.tracks()) {
      if (pid != host_pid_) {
        if (pid_named_.insert(pid).second)
          out_.meta("process_name", pid, 0, "GPU " + std::to_string(pid));
        out_.meta("thread_name", pid, tid, "stream " + std::to_string(tid));
      } else {
        out_.meta("thread_name", pid, tid,
                  tid == kUnknownThread ? "kernel launches (time and thread not recorded)"
                                        : "thread " + std::to_string(tid));
      }
    }
  }

  void collective_args(const Launcher& l) {
    const CollectiveRecord& c = l.c;
    auto [in, out] = msg_nelems(c, l.gloo);
    comm_hex_ = "0x" + to_hex(c.comm_id);
    out_.arg(number_arg("External id", c.id));
    out_.arg(text_arg("Collective name", name_of(c.op)));
    out_.arg(number_arg("In msg nelems", int64_t(in)));
    out_.arg(number_arg("Out msg nelems", int64_t(out)));
    out_.arg(number_arg("Group size", c.nranks));
    out_.arg(text_arg("dtype", torch_dtype(c.dtype)));
    out_.arg(text_arg("Process Group Name", comm_hex_));
    out_.arg(number_arg("seq", int64_t(c.seq)));
  }

  void device_args(int64_t device, uint64_t stream, uint64_t correlation) {
    out_.arg(number_arg("device", device));
    out_.arg(number_arg("stream", int64_t(stream)));
    out_.arg(number_arg("correlation", int64_t(correlation)));
  }

  std::string op_name(const Launcher& l) {
    return std::string(l.gloo ? "gloo:" : "nccl:") + std::string(name_of(l.c.op));
  }

  static std::string to_hex(uint64_t v) {
    char buf[17];
    int n = snprintf(buf, sizeof buf, "%llx", (unsigned long long)v);
    return std::string(buf, size_t(n));
  }

  const ReportInput& in_;
  const ProcessRecord& p_;
  int64_t origin_;
  EventText out_;
  trace::CollectiveBackends backends_;
  int64_t host_pid_ = 0;
  int64_t step_tid_ = -1;  // the thread of the rank's first collective
  uint64_t next_synthetic_ = kFirstSyntheticCorrelation;
  std::string comm_hex_;
  std::unordered_map<uint64_t, int32_t> devices_;  // comm id -> CUDA device
  std::unordered_map<int64_t, Launcher> launchers_;
  std::unordered_set<uint64_t> launched_;
  std::set<int64_t> pid_named_;
};

}  // namespace

void write_rank_trace(const ReportInput& input, const ProcessRecord& process, int64_t origin_ns,
                      std::ostream& os) {
  RankTrace(input, process, origin_ns, os).write();
}

}  // namespace ddpscope::reports::kineto
