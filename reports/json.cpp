// JSON output: the whole analysis as one object, a public contract for scripts
// and CI (field names are the analysis structs' fields; never rename, only add).
// Key order follows the structs so the file reads like the terminal report.
#include <nlohmann/json.hpp>
#include <string>

#include "profiler/core/atomic_file.h"
#include "reports/json_fields.h"
#include "reports/renderer.h"
#include "reports/sections/section.h"

namespace ddpscope::reports {
namespace {

using namespace ddpscope::analysis;
using namespace ddpscope::reports::json_fields;

// FSDP's per-step figures are keys of a run with FSDP only: other reports
// stay as they were.
Json iterations_summary(const RunAnalysis& run) {
  const auto& it = run.iterations;
  Json j = {{"count", it.count},
            {"warmup", it.warmup},
            {"shadow", it.shadow},
            {"median_ms", num(it.median_ms)},
            {"p95_ms", num(it.p95_ms)},
            {"mean_ms", num(it.mean_ms)},
            {"comm_median_ms", num(it.comm_median_ms)},
            {"exposed_median_ms", num(it.exposed_median_ms)},
            {"busy_median_ms", num(it.busy_median_ms)}};
  if (!run.fsdp.empty()) {
    j["fsdp_comm_median_ms"] = num(it.fsdp_comm_median_ms);
    j["fsdp_exposed_median_ms"] = num(it.fsdp_exposed_median_ms);
  }
  return j;
}

Json to_json(const IterationStats& i) {
  Json j = {{"rank", i.rank},
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
  if (i.fsdp_comm_ms > 0) {
    j["fsdp_comm_ms"] = num(i.fsdp_comm_ms);
    j["fsdp_exposed_ms"] = num(i.fsdp_exposed_ms);
  }
  return j;
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

using Key = LayoutEntry<void (*)(const RunAnalysis&, Json&)>;

// The report's keys in order: each of its own, and the sections' keys
// (section.h) at theirs; a section's key not listed here comes last.
const std::vector<Key> kLayout = {
    {"ddpscope_version", [](const RunAnalysis&, Json& j) { j = DDPSCOPE_VERSION; }},
    {"path", [](const RunAnalysis& run, Json& j) { j = run.path; }},
    {"command", [](const RunAnalysis& run, Json& j) { j = run.command; }},
    {"world_size", [](const RunAnalysis& run, Json& j) { j = run.world_size; }},
    {"ranks_recorded", [](const RunAnalysis& run, Json& j) { j = run.ranks_recorded; }},
    {"backend", [](const RunAnalysis& run, Json& j) { j = run.backend; }},
    {"timing", [](const RunAnalysis& run, Json& j) { j = run.timing; }},
    {"compute_source", [](const RunAnalysis& run, Json& j) { j = run.compute_source; }},
    {"iterations", [](const RunAnalysis& run, Json& j) { j = iterations_summary(run); }},
    {"ddp", [](const RunAnalysis& run, Json& j) { j = array_of(run.ddp); }},
    {"fsdp"},
    {"roles", [](const RunAnalysis& run, Json& j) { j = array_of(run.roles); }},
    {"buckets", [](const RunAnalysis& run, Json& j) { j = array_of(run.buckets); }},
    {"collectives", [](const RunAnalysis& run, Json& j) { j = array_of(run.collectives); }},
    {"nccl_choices", [](const RunAnalysis& run, Json& j) { j = array_of(run.nccl_choices); }},
    {"ops", [](const RunAnalysis& run, Json& j) { j = array_of(run.ops); }},
    {"ranks"},  // stragglers
    {"recommendations", [](const RunAnalysis& run, Json& j) { j = array_of(run.recommendations); }},
    {"iteration_list", [](const RunAnalysis& run, Json& j) { j = array_of(run.iteration_list); }},
    {"timeline", [](const RunAnalysis& run, Json& j) { j = array_of(run.timeline); }},
    {"lateness"},  // stragglers
    {"hangs"},
    {"mismatches"},
};

Json report(const RunAnalysis& run) {
  Json from_sections = Json::object();
  for (const auto& section : sections())
    if (section.json) section.json(run, from_sections);
  Json j;
  for (const auto& key : kLayout) {
    if (key.part) {
      key.part(run, j[key.name]);
    } else if (auto it = from_sections.find(key.name); it != from_sections.end()) {
      j[key.name] = std::move(*it);
      from_sections.erase(it);
    }
  }
  for (auto& [name, value] : from_sections.items()) j[name] = std::move(value);
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
