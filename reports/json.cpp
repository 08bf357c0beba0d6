// JSON output: the whole analysis as one object, a public contract for scripts
// and CI (field names are the analysis structs' fields; never rename, only add).
// Key order follows the structs so the file reads like the terminal report.
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "profiler/core/atomic_file.h"
#include "profiler/core/units.h"
#include "reports/renderer.h"

namespace ddpscope::reports {
namespace {

using namespace ddpscope::analysis;
using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity: an undefined figure (e.g. a bandwidth with no
// duration) is null, which every parser accepts.
Json num(double v) { return std::isfinite(v) ? Json(round_significant(v)) : Json(nullptr); }

Json text(std::string_view v) { return Json(std::string(v)); }

Json iterations_summary(const RunAnalysis& run) {
  const auto& it = run.iterations;
  return {{"count", it.count},
          {"warmup", it.warmup},
          {"shadow", it.shadow},
          {"median_ms", num(it.median_ms)},
          {"p95_ms", num(it.p95_ms)},
          {"mean_ms", num(it.mean_ms)},
          {"comm_median_ms", num(it.comm_median_ms)},
          {"exposed_median_ms", num(it.exposed_median_ms)},
          {"busy_median_ms", num(it.busy_median_ms)}};
}

Json to_json(const IterationStats& i) {
  return {{"rank", i.rank},
          {"index", i.index},
          {"warmup", i.warmup},
          {"shadow", i.shadow},
          {"start_ns", i.start_ns},
          {"end_ns", i.end_ns},
          {"iter_ms", num(i.iter_ms)},
          {"comm_ms", num(i.comm_ms)},
          {"comm_busy_ms", num(i.comm_busy_ms)},
          {"exposed_ms", num(i.exposed_ms)},
          {"buckets", i.buckets}};
}

Json to_json(const BucketStats& b) {
  return {{"instance", b.instance},
          {"index", b.index},
          {"bytes", b.bytes},
          {"calls", b.calls},
          {"median_us", num(b.median_us)},
          {"p95_us", num(b.p95_us)},
          {"algbw_gbps", num(b.algbw_gbps)},
          {"busbw_gbps", num(b.busbw_gbps)},
          {"overlap_pct", num(b.overlap_pct)},
          {"exposed_us", num(b.exposed_us)},
          {"launch_gap_us", num(b.launch_gap_us)},
          {"nccl_choice", b.nccl_choice}};
}

// -1 (not reported) becomes null.
Json known(double v) { return v < 0 ? Json() : num(v); }

Json to_json(const NcclChoiceStats& n) {
  return {{"op", text(name_of(n.op))},
          {"bytes", n.bytes},
          {"nranks", n.nranks},
          {"algo", n.algo},
          {"proto", n.proto},
          {"nchannels", n.nchannels},
          {"calls", n.calls},
          {"median_us", num(n.median_us)},
          {"busbw_gbps", num(n.busbw_gbps)},
          {"kernel_us", known(n.kernel_us)},
          {"network_us", known(n.network_us)}};
}

Json to_json(const SizeClassStats& s) {
  return {{"op", text(name_of(s.op))},
          {"bytes", s.bytes},
          {"nranks", s.nranks},
          {"calls", s.calls},
          {"median_us", num(s.median_us)},
          {"p95_us", num(s.p95_us)},
          {"algbw_gbps", num(s.algbw_gbps)},
          {"busbw_gbps", num(s.busbw_gbps)}};
}

Json to_json(const OpSummary& o) {
  return {{"op", text(name_of(o.op))},
          {"ranks", o.ranks},
          {"calls", o.calls},
          {"bytes", o.bytes},
          {"total_ms", num(o.total_ms)},
          {"median_us", num(o.median_us)},
          {"p95_us", num(o.p95_us)},
          {"algbw_gbps", num(o.algbw_gbps)},
          {"busbw_gbps", num(o.busbw_gbps)},
          {"timing", text(name_of(o.timing))}};
}

Json to_json(const RankStats& r) {
  return {{"rank", r.rank},
          {"host", r.host},
          {"late_ms_median", num(r.late_ms_median)},
          {"late_ms_p95", num(r.late_ms_p95)},
          {"late_ms_max", num(r.late_ms_max)},
          {"iteration_late_ms_median", num(r.iteration_late_ms_median)},
          {"last_share_pct", num(r.last_share_pct)},
          {"clock_correction_us", num(r.clock_correction_us)},
          {"clock_drift_ppm", num(r.clock_drift_ppm)},
          {"clock_residual_us", num(r.clock_residual_us)},
          {"kernel_overlap_pct", num(r.kernel_overlap_pct)},
          {"iter_ms_median", num(r.iter_ms_median)},
          {"comm_ms_median", num(r.comm_ms_median)},
          {"collectives", r.collectives},
          {"dropped_events", r.dropped_events},
          {"iterations", r.iterations},
          {"shadow_iterations", r.shadow_iterations},
          {"exit_code", r.exit_code >= 0 ? Json(r.exit_code) : Json()},
          {"signal", r.signal > 0 ? Json(r.signal) : Json()},
          {"finalized", r.finalized}};
}

Json index_or_null(int i) { return i >= 0 ? Json(i) : Json(); }

Json to_json(const MissingRank& m) {
  Json last;
  if (m.last_seq)
    last = {{"seq", *m.last_seq},
            {"op", text(name_of(m.last_op))},
            {"bytes", m.last_bytes},
            {"bucket", index_or_null(m.last_bucket)}};
  return {{"rank", m.rank},
          {"last_completed", last},
          {"exit_code", m.exit_code >= 0 ? Json(m.exit_code) : Json()},
          {"signal", m.signal > 0 ? Json(m.signal) : Json()},
          {"ended", m.ended}};
}

Json stacks_json(const Hang& h) {
  Json a = Json::array();
  for (const auto& s : h.stacks)
    a.push_back({{"rank", s.rank}, {"frames", s.frames}, {"user_frame", s.user_frame}});
  return a;
}

Json to_json(const Hang& h) {
  Json missing = Json::array();
  for (const auto& m : h.missing) missing.push_back(to_json(m));
  return {{"comm", std::to_string(h.comm_id)},
          {"nranks", h.nranks},
          {"seq", h.seq},
          {"op", text(name_of(h.op))},
          {"dtype", text(name_of(h.dtype))},
          {"count", h.count},
          {"bytes", h.bytes},
          {"bucket", index_or_null(h.bucket)},
          {"iteration", index_or_null(h.iteration)},
          {"state", h.state.empty() ? Json() : Json(h.state)},
          {"waiting_ranks", h.waiting_ranks},
          {"missing_ranks", h.missing_ranks},
          {"completed_ranks", h.completed_ranks},
          {"waiting_since_s", num(h.waiting_since_s)},
          {"waited_s", num(h.waited_s)},
          {"missing", missing},
          {"stacks", stacks_json(h)}};
}

Json to_json(const Mismatch& m) {
  Json shapes = Json::array();
  for (const auto& s : m.shapes)
    shapes.push_back({{"ranks", s.ranks},
                      {"op", text(name_of(s.op))},
                      {"dtype", text(name_of(s.dtype))},
                      {"count", s.count}});
  return {{"comm", std::to_string(m.comm_id)}, {"seq", m.seq}, {"shapes", shapes}};
}

Json to_json(const DdpInstanceSummary& d) {
  return {{"instance", d.instance},
          {"buckets_from", d.buckets_from},
          {"module", d.module},
          {"bucket_cap_bytes", d.bucket_cap_bytes},
          {"first_bucket_bytes", d.first_bucket_bytes},
          {"explicit_cap_sets_first_bucket", d.explicit_cap_sets_first_bucket},
          {"find_unused_parameters", d.find_unused_parameters},
          {"static_graph", d.static_graph},
          {"gradient_as_bucket_view", d.gradient_as_bucket_view},
          {"comm_hook", d.comm_hook},
          {"rebuilt", d.rebuilt},
          {"bucket_bytes", d.bucket_bytes},
          {"parameters", d.parameters},
          {"parameter_bytes", d.parameter_bytes}};
}

Json to_json(const RoleStats& r) {
  return {{"role", text(name_of(r.role))},
          {"calls", r.calls},
          {"bytes", r.bytes},
          {"total_ms", num(r.total_ms)}};
}

Json to_json(const Recommendation& r) {
  return {{"setting", r.setting}, {"value", r.value}, {"reason", r.reason}};
}

Json to_json(const TimelineSpan& s) {
  return {{"rank", s.rank}, {"iteration", s.iteration},    {"kind", s.kind},
          {"name", s.name}, {"start_ms", num(s.start_ms)}, {"end_ms", num(s.end_ms)}};
}

template <class T>
Json array_of(const std::vector<T>& items) {
  Json a = Json::array();
  for (const auto& item : items) a.push_back(to_json(item));
  return a;
}

Json lateness(const RunAnalysis& run) {
  Json rows = Json::array();
  for (const auto& rank_row : run.lateness) {
    Json row = Json::array();
    for (double v : rank_row) row.push_back(num(v));
    rows.push_back(std::move(row));
  }
  return rows;
}

Json report(const RunAnalysis& run) {
  Json j;
  j["ddpscope_version"] = DDPSCOPE_VERSION;
  j["path"] = run.path;
  j["command"] = run.command;
  j["world_size"] = run.world_size;
  j["ranks_recorded"] = run.ranks_recorded;
  j["backend"] = run.backend;
  j["timing"] = run.timing;
  j["compute_source"] = run.compute_source;
  j["iterations"] = iterations_summary(run);
  j["ddp"] = array_of(run.ddp);
  j["roles"] = array_of(run.roles);
  j["buckets"] = array_of(run.buckets);
  j["collectives"] = array_of(run.collectives);
  j["nccl_choices"] = array_of(run.nccl_choices);
  j["ops"] = array_of(run.ops);
  j["ranks"] = array_of(run.ranks);
  j["recommendations"] = array_of(run.recommendations);
  j["iteration_list"] = array_of(run.iteration_list);
  j["timeline"] = array_of(run.timeline);
  j["lateness"] = lateness(run);
  j["hangs"] = array_of(run.hangs);
  j["mismatches"] = array_of(run.mismatches);
  return j;
}

class JsonRenderer : public Renderer {
 public:
  void write(const ReportInput& input, const std::string& target) override {
    // Built before the file is opened: a model error never leaves a temp file.
    // Host names and command lines are bytes, not necessarily UTF-8: replace
    // invalid sequences instead of failing the whole report.
    std::string text =
        report(input.run).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
    core::write_atomically(
        target, [&](std::ostream& os) { os.write(text.data(), std::streamsize(text.size())); });
  }
};

}  // namespace

std::unique_ptr<Renderer> make_json_renderer() { return std::make_unique<JsonRenderer>(); }

}  // namespace ddpscope::reports
