// The trace as Chrome trace-event JSON ("JSON Object Format"), for
// chrome://tracing and ui.perfetto.dev: one process per rank, one thread per
// track (trace_events.cpp decides which), complete ("X") events with args.
// Events go into a string buffer flushed every megabyte: a run of millions of
// collectives and kernels never sits in memory.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "reports/trace/json_text.h"
#include "reports/trace/trace_events.h"
#include "reports/trace/trace_writers.h"

namespace ddpscope::reports::trace {
namespace {

using json_text::put;
using json_text::put_us;

// One member of an "args" object: `"key":value`, after a comma unless first.
template <class T>
void arg(std::string& out, const char* key, const T& v) {
  out += out.back() == '{' ? "\"" : ",\"";
  out += key;
  out += "\":";
  put(out, v);
}

class JsonSink : public TraceSink {
 public:
  explicit JsonSink(std::ostream& os) : os_(os) {}

  void begin(const RunInfo& run) override {
    origin_ = run.origin_ns;
    nlohmann::json other = {{"run", run.path},
                            {"timeline", run.timeline},
                            {"origin_ns", std::to_string(run.origin_ns)}};
    buf_ += "{\"displayTimeUnit\":\"ms\",\"otherData\":" +
            other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            ",\n\"traceEvents\":[\n";
  }
  void process(int rank, const std::string& name) override {
    meta("process_name", rank, 0, "name", name);
    meta("process_sort_index", rank, 0, "sort_index", rank);
  }
  void track(const TrackInfo& t) override {
    threads_.push_back({t.rank, t.order});  // index -> (pid, tid)
    meta("thread_name", t.rank, t.order, "name", t.name);
  }
  // A complete event over [start, end]; an unknown or earlier end is dur 0.
  void slice(const Slice& s) override {
    auto [pid, tid] = threads_[s.track];
    open('X', s.name, pid, tid) += ",\"cat\":\"";
    buf_.append(s.category).append("\",\"ts\":");
    put_us(buf_, s.start_ns - origin_);
    buf_ += ",\"dur\":";
    put_us(buf_, s.end_ns != kNoTime && s.end_ns > s.start_ns ? s.end_ns - s.start_ns : 0);
    buf_ += ",\"args\":{";
    for (size_t i = 0; i < s.arg_count; ++i) {
      const Arg& a = s.args[i];
      if (a.is_text)
        arg(buf_, a.key, a.text);
      else
        arg(buf_, a.key, a.number);
    }
    close();
  }
  void end() override {
    buf_ += "\n]}\n";
    flush();
  }

 private:
  // Starts an event with its phase, name, pid and tid; the caller appends its
  // other fields and opens "args", then calls close().
  std::string& open(char ph, std::string_view name, int pid, int64_t tid) {
    buf_ += events_++ ? ",\n{\"ph\":\"" : "{\"ph\":\"";
    buf_ += ph;
    buf_ += "\",\"name\":";
    put(buf_, name);
    buf_ += ",\"pid\":";
    put(buf_, pid);
    buf_ += ",\"tid\":";
    put(buf_, tid);
    return buf_;
  }
  void close() {
    buf_ += "}}";
    if (buf_.size() >= kFlushAt) flush();
  }
  // Metadata ("M"): names and sort order; ts 0 so that every event has one.
  template <class T>
  void meta(const char* what, int pid, int64_t tid, const char* key, const T& value) {
    arg(open('M', what, pid, tid) += ",\"ts\":0,\"args\":{", key, value);
    close();
  }
  void flush() {
    os_.write(buf_.data(), std::streamsize(buf_.size()));
    buf_.clear();
  }

  static constexpr size_t kFlushAt = 1 << 20;
  std::ostream& os_;
  int64_t origin_ = 0;
  std::string buf_;
  uint64_t events_ = 0;
  std::vector<std::pair<int, int64_t>> threads_;
};

}  // namespace

void write_json_trace(store::RunReader& reader, std::ostream& os, const CollectiveRuns* read,
                      const analysis::CollectiveLabels* labels) {
  JsonSink sink(os);
  walk_run(reader, sink, read, labels);
}

}  // namespace ddpscope::reports::trace
