#include "reports/text_hangs.h"

#include <string>
#include <vector>

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

std::string what(const analysis::Hang& h) {
  std::string s = std::string(name_of(h.op)) + " #" + std::to_string(h.seq) + ", " +
                  std::string(name_of(h.dtype)) + ", " + std::to_string(h.bytes) + " bytes";
  if (h.bucket >= 0) s += ", DDP bucket " + std::to_string(h.bucket);
  if (h.iteration >= 0) s += " of iteration " + std::to_string(h.iteration);
  return s;
}

void print_missing(const analysis::MissingRank& m, std::ostream& out) {
  out << "    missing: rank " << m.rank << ", ";
  if (!m.last_seq)
    out << "completed nothing there";
  else
    out << "last completed " << name_of(m.last_op) << " #" << *m.last_seq
        << (m.last_bucket >= 0 ? " (bucket " + std::to_string(m.last_bucket) + ")" : "");
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

}  // namespace ddpscope::reports
