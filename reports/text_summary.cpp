#include "reports/text_summary.h"

#include <cstdio>
#include <set>
#include <string>

namespace ddpscope::reports {

void print_overview(const RunOverview& run, std::ostream& out) {
  std::set<std::string> hosts, backends;
  uint64_t dropped = 0;
  int world = 0;
  for (const auto& p : run.processes) {
    hosts.insert(p.host);
    backends.insert(std::string(name_of(p.backend)));
    dropped += p.dropped_events;
    world = std::max(world, p.world_size);
  }
  out << "run        " << run.path << "\n";
  if (!run.command.empty()) out << "command    " << run.command << "\n";
  if (!run.part.empty()) out << "part       " << run.part << "\n";
  out << "ranks      " << run.processes.size() << " recorded";
  if (world) out << " of world size " << world;
  out << " on " << hosts.size() << (hosts.size() == 1 ? " host" : " hosts") << "\n";
  out << "backend    ";
  for (const auto& b : backends) out << b << " ";
  out << "\ncollectives " << run.collectives << " calls";
  if (dropped) out << " (" << dropped << " events dropped: raise DDPSCOPE_BUFFER_EVENTS)";
  out << "\n\n";
}

void print_op_table(const std::vector<analysis::OpSummary>& ops, std::ostream& out) {
  char line[256];
  snprintf(line, sizeof line, "%-15s %6s %10s %12s %11s %12s %11s %11s %11s  %s\n", "op", "ranks",
           "calls", "bytes", "total ms", "median us", "p95 us", "algbw GB/s", "busbw GB/s",
           "timing");
  out << line;
  for (const auto& s : ops) {
    snprintf(line, sizeof line, "%-15s %6d %10llu %12s %11.2f %12.1f %11.1f %11.3f %11.3f  %s\n",
             std::string(name_of(s.op)).c_str(), s.ranks, (unsigned long long)s.calls,
             human_bytes(double(s.bytes)).c_str(), s.total_ms, s.median_us, s.p95_us, s.algbw_gbps,
             s.busbw_gbps, std::string(name_of(s.timing)).c_str());
    out << line;
  }
  if (ops.empty()) out << "(no collectives recorded)\n";
}

}  // namespace ddpscope::reports
