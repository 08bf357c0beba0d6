#include "reports/live.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string_view>

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

// The FSDP unit-phase that compute waited for longest per step (null: none waited).
struct ExposedUnit {
  const analysis::FsdpRootStats* root = nullptr;
  const analysis::FsdpUnitStats* unit = nullptr;
  const analysis::FsdpPhaseStats* phase = nullptr;
};

ExposedUnit most_exposed_unit(const analysis::RunAnalysis& run) {
  ExposedUnit most;
  for (const auto& root : run.fsdp)
    for (const auto& u : root.units)
      for (const auto& p : u.phases)
        if (p.exposed_us > 0 && (!most.phase || p.exposed_us > most.phase->exposed_us))
          most = {&root, &u, &p};
  return most;
}

// FSDP's part of the line: its exposed time where DDP's steps are the line's
// (a job with both), and the unit that cost most.
std::string fsdp_part(const analysis::RunAnalysis& run) {
  if (run.fsdp.empty()) return "";
  std::string part;
  if (!run.ddp.empty())
    part += " | FSDP exposed " + fixed(run.iterations.fsdp_exposed_median_ms, 1) + " ms";
  if (auto most = most_exposed_unit(run); most.phase)
    part += " | most exposed unit " + unit_name(*most.unit) +
            analysis::of_root(*most.root, run.fsdp.size()) + " " +
            std::string(name_of(most.phase->phase)) + " " + fixed(most.phase->exposed_us / 1e3, 1) +
            " ms";
  return part;
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
  line += fsdp_part(live.window);
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
      {"ddpscope_fsdp_comm_seconds_per_step", "gauge",
       "Median FSDP communication per step over the window (busy time; FSDP jobs only).",
       [](const auto& r) { return r.fsdp_comm_ms / 1e3; }},
      {"ddpscope_fsdp_exposed_comm_seconds_per_step", "gauge",
       "Median FSDP communication per step that compute waited for (FSDP jobs only).",
       [](const auto& r) { return r.fsdp_exposed_ms / 1e3; }},
      {"ddpscope_late_seconds", "gauge",
       "How late the rank enters collectives after the first rank (median over the window).",
       [](const auto& r) { return r.late_ms / 1e3; }},
      {"ddpscope_dropped_events_total", "counter",
       "Events the rank's recorder dropped since the job began.",
       [](const auto& r) { return double(r.dropped_events); }},
  };
  const bool fsdp = !live.window.fsdp.empty();
  for (const auto& s : series) {
    if (!fsdp && std::string_view(s.name).starts_with("ddpscope_fsdp_")) continue;
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

// Per FSDP unit and phase, over every rank's steady steps in the window.
void fsdp_unit_series(const analysis::LiveFigures& live, const std::string& job,
                      std::ostream& out) {
  if (live.window.fsdp.empty()) return;
  struct Series {
    const char* name;
    const char* help;
    std::function<double(const analysis::FsdpPhaseStats&)> value;
  };
  const Series series[] = {
      {"ddpscope_fsdp_unit_exposed_seconds_per_step",
       "Median time per step that compute waited for the unit's collectives of this phase.",
       [](const auto& p) { return p.exposed_us / 1e6; }},
      {"ddpscope_fsdp_unit_seconds", "Median time of one of the unit's collectives of this phase.",
       [](const auto& p) { return p.median_us / 1e6; }},
      {"ddpscope_fsdp_unit_calls_per_step", "The unit's collectives of this phase per step.",
       [](const auto& p) { return p.per_iteration; }},
      {"ddpscope_fsdp_unit_bytes", "The unit's unsharded size in the collective's dtype (FSDP's).",
       [](const auto& p) { return double(p.bytes); }},
      {"ddpscope_fsdp_unit_bus_bandwidth_bytes_per_second",
       "Bus bandwidth of the phase's median collective (nccl-tests' busbw).",
       [](const auto& p) { return p.busbw_gbps * 1e9; }},
  };
  for (const auto& s : series) {
    Family f(out, s.name, "gauge", s.help);
    for (const auto& root : live.window.fsdp)
      for (const auto& u : root.units)
        for (const auto& p : u.phases)
          f.sample("job=\"" + label_value(job) + "\",root=\"" + std::to_string(root.root) +
                       "\",unit=\"" + label_value(unit_name(u)) + "\",phase=\"" +
                       std::string(name_of(p.phase)) + "\",op=\"" + std::string(name_of(p.op)) +
                       "\"",
                   s.value(p));
  }
}

}  // namespace

void write_prometheus(const analysis::LiveFigures& live, const std::string& job,
                      std::ostream& out) {
  job_series(live, job, out);
  rank_series(live, job, out);
  bucket_series(live, job, out);
  fsdp_unit_series(live, job, out);
}

}  // namespace ddpscope::reports
