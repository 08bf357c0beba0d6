#include "reports/live.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace ddpscope::reports {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pct(double part, double whole) {
  return whole > 0 ? " (" + fixed(100.0 * part / whole, 0) + "%)" : "";
}

const analysis::BucketStats* slowest_bucket(const analysis::RunAnalysis& run) {
  const analysis::BucketStats* slowest = nullptr;
  for (const auto& b : run.buckets)
    if (!slowest || b.median_us > slowest->median_us) slowest = &b;
  return slowest;
}

const analysis::LiveRank* latest_rank(const analysis::LiveFigures& live) {
  const analysis::LiveRank* latest = nullptr;
  for (const auto& r : live.ranks)
    if (r.late_ms > 0 && (!latest || r.late_ms > latest->late_ms)) latest = &r;
  return latest;
}

}  // namespace

std::string live_line(const analysis::LiveFigures& live) {
  const auto& it = live.window.iterations;
  if (live.files == 0) return "ddpscope: waiting for the ranks' first flush";
  std::string line = "ddpscope: step " + std::to_string(live.steps);
  if (it.median_ms <= 0) {
    line += " | no whole step in the last " +
            fixed(double(live.until_ns - live.since_ns) / 1e9, 0) + " s (" +
            std::to_string(live.files) + " rank files)";
  } else {
    line += " | " + fixed(it.median_ms, 1) + " ms/step";
    line += " | comm " + fixed(it.comm_median_ms, 1) + " ms" + pct(it.comm_median_ms, it.median_ms);
    line += " | exposed " + fixed(it.exposed_median_ms, 1) + " ms" +
            pct(it.exposed_median_ms, it.median_ms);
  }
  if (const auto* b = slowest_bucket(live.window))
    line += " | slowest bucket " + std::to_string(b->index) + " " + fixed(b->median_us / 1e3, 1) +
            " ms";
  if (const auto* r = latest_rank(live))
    line += " | rank " + std::to_string(r->rank) + " late " + fixed(r->late_ms, 1) + " ms";
  uint64_t dropped = 0;
  for (const auto& r : live.ranks) dropped += r.dropped_events;
  line += " | " + std::to_string(dropped) + " dropped";
  if (live.unreadable > 0) line += " | " + std::to_string(live.unreadable) + " files locked";
  return line;
}

namespace {

std::string label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[64];
  snprintf(buf, sizeof buf, "%.15g", v);  // a Unix time to 10 µs
  return buf;
}

// One metric family: its HELP and TYPE, then a sample per call of `each`.
class Family {
 public:
  Family(std::ostream& out, const char* name, const char* type, const char* help)
      : out_(out), name_(name) {
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  void sample(const std::string& labels, double v) {
    out_ << name_ << '{' << labels << "} " << number(v) << '\n';
  }

 private:
  std::ostream& out_;
  const char* name_;
};

void job_series(const analysis::LiveFigures& live, const std::string& job, std::ostream& out) {
  std::string l = "job=\"" + label_value(job) + "\"";
  Family(out, "ddpscope_window_seconds", "gauge", "Length of the sliding window the figures cover.")
      .sample(l, double(live.until_ns - live.since_ns) / 1e9);
  Family(out, "ddpscope_window_end_timestamp_seconds", "gauge",
         "End of the window (Unix time); it began ddpscope_window_seconds earlier.")
      .sample(l, double(live.until_ns) / 1e9);
  Family(out, "ddpscope_rank_files", "gauge", "Rank files in the recording directory.")
      .sample(l, live.files);
  Family(out, "ddpscope_rank_files_unreadable", "gauge",
         "Rank files that could not be read at the last refresh (locked, being created).")
      .sample(l, live.unreadable);
  Family(out, "ddpscope_refresh_seconds", "gauge", "What the last refresh cost record.")
      .sample(l, live.refresh_ms / 1e3);
}

void rank_series(const analysis::LiveFigures& live, const std::string& job, std::ostream& out) {
  struct Series {
    const char* name;
    const char* type;
    const char* help;
    std::function<double(const analysis::LiveRank&)> value;
  };
  const Series series[] = {
      {"ddpscope_steps_total", "counter", "Steps the rank completed since the job began.",
       [](const auto& r) { return double(r.steps); }},
      {"ddpscope_step_seconds", "gauge", "Median step time over the window.",
       [](const auto& r) { return r.step_ms / 1e3; }},
      {"ddpscope_comm_seconds_per_step", "gauge",
       "Median communication per step over the window (first bucket start to last bucket end).",
       [](const auto& r) { return r.comm_ms / 1e3; }},
      {"ddpscope_exposed_comm_seconds_per_step", "gauge",
       "Median communication per step not hidden behind compute, over the window.",
       [](const auto& r) { return r.exposed_ms / 1e3; }},
      {"ddpscope_late_seconds", "gauge",
       "How late the rank enters collectives after the first rank (median over the window).",
       [](const auto& r) { return r.late_ms / 1e3; }},
      {"ddpscope_dropped_events_total", "counter",
       "Events the rank's recorder dropped since the job began.",
       [](const auto& r) { return double(r.dropped_events); }},
  };
  for (const auto& s : series) {
    Family f(out, s.name, s.type, s.help);
    for (const auto& r : live.ranks)
      f.sample("job=\"" + label_value(job) + "\",rank=\"" + std::to_string(r.rank) + "\",host=\"" +
                   label_value(r.host) + "\"",
               s.value(r));
  }
}

void bucket_series(const analysis::LiveFigures& live, const std::string& job, std::ostream& out) {
  struct Series {
    const char* name;
    const char* help;
    std::function<double(const analysis::BucketStats&)> value;
  };
  const Series series[] = {
      {"ddpscope_bucket_seconds", "Median time of the DDP bucket's collective over the window.",
       [](const auto& b) { return b.median_us / 1e6; }},
      {"ddpscope_bucket_exposed_seconds",
       "Median part of the bucket's collective not hidden behind compute.",
       [](const auto& b) { return b.exposed_us / 1e6; }},
      {"ddpscope_bucket_bus_bandwidth_bytes_per_second",
       "Bus bandwidth of the bucket's median collective (nccl-tests' busbw).",
       [](const auto& b) { return b.busbw_gbps * 1e9; }},
      {"ddpscope_bucket_bytes", "Bytes the bucket's collective carries.",
       [](const auto& b) { return double(b.bytes); }},
  };
  for (const auto& s : series) {
    Family f(out, s.name, "gauge", s.help);
    for (const auto& b : live.window.buckets)
      f.sample("job=\"" + label_value(job) + "\",ddp=\"" + std::to_string(b.instance) +
                   "\",bucket=\"" + std::to_string(b.index) + "\",op=\"allreduce\"",
               s.value(b));
  }
}

}  // namespace

void write_prometheus(const analysis::LiveFigures& live, const std::string& job,
                      std::ostream& out) {
  job_series(live, job, out);
  rank_series(live, job, out);
  bucket_series(live, job, out);
}

}  // namespace ddpscope::reports
