// Hangs and mismatches (profiler/analysis/hangs.cpp, docs/hangs.md): the
// terminal's account, printed first, and JSON's `hangs` and `mismatches`.
#include "reports/sections/hangs.h"

#include <optional>
#include <string>
#include <vector>

#include "reports/json_fields.h"
#include "reports/sections/section.h"

namespace ddpscope::reports {
namespace {

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::string seconds(double s) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// "blocks.2 forward_all_gather", as the FSDP table names a unit and phase.
std::string fsdp_text(const analysis::FsdpCallLabel& f) {
  return (f.fqn.empty() ? "(root)" : f.fqn) + " " + name_of(f.phase);
}

std::string what(const analysis::Hang& h) {
  std::string s = std::string(name_of(h.op)) + " #" + std::to_string(h.seq) + ", " +
                  std::string(name_of(h.dtype)) + ", " + std::to_string(h.bytes) + " bytes";
  if (h.bucket >= 0) s += ", DDP bucket " + std::to_string(h.bucket);
  if (h.fsdp) s += ", FSDP " + fsdp_text(*h.fsdp);
  if (h.iteration >= 0) s += " of iteration " + std::to_string(h.iteration);
  return s;
}

void print_missing(const analysis::MissingRank& m, std::ostream& out) {
  out << "    missing: rank " << m.rank << ", ";
  if (!m.last_seq)
    out << "completed nothing there";
  else
    out << "last completed " << name_of(m.last_op) << " #" << *m.last_seq
        << (m.last_bucket >= 0 ? " (bucket " + std::to_string(m.last_bucket) + ")" : "")
        << (m.last_fsdp ? " (" + fsdp_text(*m.last_fsdp) + ")" : "");
  out << "; " << m.ended << "\n";
}

void print_hang(const analysis::Hang& h, std::ostream& out) {
  out << "  communicator " << h.comm_id << " (" << h.nranks << " ranks): " << what(h) << "\n";
  if (!h.waiting_ranks.empty())
    out << "    waiting: " << ranks_text(h.waiting_ranks)
        << (h.state == "enqueued" ? " (enqueued on the GPU, not done)" : " (inside the call)")
        << " since " << seconds(h.waiting_since_s) << " into the run, " << seconds(h.waited_s)
        << " waited\n";
  if (!h.completed_ranks.empty()) out << "    completed: " << ranks_text(h.completed_ranks) << "\n";
  for (const auto& m : h.missing) print_missing(m, out);
  for (const auto& s : h.stacks) {
    out << "    rank " << s.rank << " was at " << s.frames.front() << "\n";
    if (!s.user_frame.empty() && s.user_frame != s.frames.front())
      out << "      in your code at " << s.user_frame << "\n";
  }
}

void print_mismatch(const analysis::Mismatch& m, std::ostream& out) {
  out << "  communicator " << m.comm_id << " #" << m.seq << ":";
  for (size_t i = 0; i < m.shapes.size(); ++i) {
    const auto& s = m.shapes[i];
    out << (i ? ";" : "") << " " << name_of(s.op) << " " << name_of(s.dtype) << " x" << s.count
        << " on " << ranks_text(s.ranks);
  }
  out << "\n";
}

// --- JSON ---

using json_fields::index_or_null;
using json_fields::Json;
using json_fields::num;
using json_fields::text;

Json to_json(const std::optional<analysis::FsdpCallLabel>& f) {
  if (!f) return Json();
  return {{"unit", f->fqn}, {"phase", text(name_of(f->phase))}};
}

Json to_json(const analysis::MissingRank& m) {
  Json last;
  if (m.last_seq)
    last = {{"seq", *m.last_seq},
            {"op", text(name_of(m.last_op))},
            {"bytes", m.last_bytes},
            {"bucket", index_or_null(m.last_bucket)},
            {"fsdp", to_json(m.last_fsdp)}};
  return {{"rank", m.rank},
          {"last_completed", last},
          {"exit_code", m.exit_code >= 0 ? Json(m.exit_code) : Json()},
          {"signal", m.signal > 0 ? Json(m.signal) : Json()},
          {"ended", m.ended}};
}

Json stacks_json(const analysis::Hang& h) {
  Json a = Json::array();
  for (const auto& s : h.stacks)
    a.push_back({{"rank", s.rank}, {"frames", s.frames}, {"user_frame", s.user_frame}});
  return a;
}

Json to_json(const analysis::Hang& h) {
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
          {"fsdp", to_json(h.fsdp)},
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

Json to_json(const analysis::Mismatch& m) {
  Json shapes = Json::array();
  for (const auto& s : m.shapes)
    shapes.push_back({{"ranks", s.ranks},
                      {"op", text(name_of(s.op))},
                      {"dtype", text(name_of(s.dtype))},
                      {"count", s.count}});
  return {{"comm", std::to_string(m.comm_id)}, {"seq", m.seq}, {"shapes", shapes}};
}

template <class T>
Json array_of(const std::vector<T>& items) {
  Json a = Json::array();
  for (const auto& item : items) a.push_back(to_json(item));
  return a;
}

void json_hangs(const RunAnalysis& run, Json& report) {
  report["hangs"] = array_of(run.hangs);
  report["mismatches"] = array_of(run.mismatches);
}

}  // namespace

void print_hangs(const analysis::RunAnalysis& run, std::ostream& out) {
  if (!run.hangs.empty()) {
    out << "where the job stopped (the first collective not every rank completed):\n";
    for (const auto& h : run.hangs) print_hang(h, out);
  }
  if (!run.mismatches.empty()) {
    out << "ranks that called different collectives at the same point:\n";
    for (const auto& m : run.mismatches) print_mismatch(m, out);
  }
  if (!run.hangs.empty() || !run.mismatches.empty()) out << "\n";
}

Section hangs_section() { return {.name = "hangs", .text = print_hangs, .json = json_hangs}; }

}  // namespace ddpscope::reports
