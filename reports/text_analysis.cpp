#include "reports/text_analysis.h"

#include <cstdio>
#include <string>
#include <vector>

#include "reports/sections/section.h"
#include "reports/text_line.h"
#include "reports/text_summary.h"

namespace ddpscope::reports {
namespace {

void print_iterations(const analysis::RunAnalysis& run, std::ostream& out) {
  const auto& it = run.iterations;
  if (it.count == 0) {
    out << "iterations  none detected (no repeating DDP all-reduce pattern)\n\n";
    return;
  }
  line(out, "iterations  %d per rank (%d warm-up), median %.2f ms, p95 %.2f ms", it.count,
       it.warmup, it.median_ms, it.p95_ms);
  if (it.shadow > 0)
    line(out, "            + %d join() shadow steps per rank (ranks out of data), not counted",
         it.shadow);
  double pct = it.median_ms > 0 ? 100 * it.exposed_median_ms / it.median_ms : 0;
  line(out,
       "comm        %.2f ms per iteration (busy %.2f ms), exposed %.2f ms = %.0f%% of the "
       "iteration [compute from %s]",
       it.comm_median_ms, it.busy_median_ms, it.exposed_median_ms, pct, run.compute_source.c_str());
  out << "\n";
}

// Where the buckets come from: DDP's own account, or the all-reduce pattern.
void print_ddp(const analysis::RunAnalysis& run, std::ostream& out) {
  for (const auto& d : run.ddp) {
    std::string config;
    if (d.bucket_cap_bytes) config += ", cap " + human_bytes(double(d.bucket_cap_bytes));
    if (d.find_unused_parameters) config += ", find_unused_parameters";
    if (d.static_graph) config += ", static_graph";
    if (d.gradient_as_bucket_view) config += ", gradient_as_bucket_view";
    if (!d.comm_hook.empty()) config += ", comm hook " + d.comm_hook;
    line(out, "DDP %d %s: %zu buckets%s [buckets from %s]", d.instance, d.module.c_str(),
         d.bucket_bytes.size(), config.c_str(),
         d.buckets_from == "ddp" ? "DDP's own account" : "the all-reduce pattern");
  }
  std::string roles;
  for (const auto& r : run.roles)
    roles += std::string(roles.empty() ? "" : ", ") + analysis::name_of(r.role) + " " +
             std::to_string(r.calls);
  if (!roles.empty()) line(out, "collectives by role: %s", roles.c_str());
  if (!run.ddp.empty() || !roles.empty()) out << "\n";
}

void print_buckets(const analysis::RunAnalysis& run, std::ostream& out) {
  if (run.buckets.empty()) return;
  bool several = run.ddp.size() > 1;
  bool nccl = !run.nccl_choices.empty();
  line(out, "%-7s %12s %7s %11s %10s %11s %10s %11s %10s%s", "bucket", "bytes", "calls",
       "median us", "p95 us", "busbw GB/s", "overlap %", "exposed us", "gap us",
       nccl ? "  NCCL chose" : "");
  for (const auto& b : run.buckets) {
    std::string name = several ? std::to_string(b.instance) + "." + std::to_string(b.index)
                               : std::to_string(b.index);
    line(out, "%-7s %12s %7llu %11.1f %10.1f %11.3f %10.1f %11.1f %10.1f%s%s", name.c_str(),
         human_bytes(double(b.bytes)).c_str(), (unsigned long long)b.calls, b.median_us, b.p95_us,
         b.busbw_gbps, b.overlap_pct, b.exposed_us, b.launch_gap_us, nccl ? "  " : "",
         b.nccl_choice.c_str());
  }
  out << "\n";
}

std::string micros(double us) {
  char buf[32];
  if (us < 0) return "-";
  snprintf(buf, sizeof buf, "%.1f", us);
  return buf;
}

// What NCCL chose per op and size (its profiler plugin), with the kernel's
// GPU time and the network's share.
void print_nccl_choices(const analysis::RunAnalysis& run, std::ostream& out) {
  if (run.nccl_choices.empty()) return;
  line(out, "NCCL's choices (its profiler plugin):");
  line(out, "%-15s %12s %6s %-7s %-7s %4s %7s %11s %11s %11s %11s", "op", "bytes", "ranks", "algo",
       "proto", "ch", "calls", "median us", "busbw GB/s", "kernel us", "network us");
  for (const auto& n : run.nccl_choices)
    line(out, "%-15s %12s %6d %-7s %-7s %4d %7llu %11.1f %11.3f %11s %11s",
         std::string(name_of(n.op)).c_str(), human_bytes(double(n.bytes)).c_str(), n.nranks,
         n.algo.c_str(), n.proto.c_str(), n.nchannels, (unsigned long long)n.calls, n.median_us,
         n.busbw_gbps, micros(n.kernel_us).c_str(), micros(n.network_us).c_str());
  out << "\n";
}

void print_recommendations(const analysis::RunAnalysis& run, std::ostream& out) {
  if (run.recommendations.empty()) {
    out << "recommendations: none (nothing in this run calls for a change)\n";
    return;
  }
  out << "recommendations:\n";
  for (const auto& r : run.recommendations)
    out << "  " << r.setting << (r.value.empty() ? "" : " = " + r.value) << "\n      " << r.reason
        << "\n";
}

using Part = LayoutEntry<void (*)(const RunAnalysis&, std::ostream&)>;

// The terminal's order. Hangs come first: a run that has them is a run whose
// other figures matter less.
const std::vector<Part> kLayout = {
    {"hangs"},
    {"iterations", print_iterations},
    {"ddp", print_ddp},
    {"fsdp"},
    {"buckets", print_buckets},
    {"nccl_choices", print_nccl_choices},
    {"stragglers"},
    {"recommendations", print_recommendations},
};

}  // namespace

void print_analysis(const analysis::RunAnalysis& run, std::ostream& out) {
  for (auto print : in_layout(kLayout, &Section::text)) print(run, out);
}

}  // namespace ddpscope::reports
