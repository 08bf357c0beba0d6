#include "profiler/store/run_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "profiler/core/index_ranges.h"
#include "profiler/core/input_error.h"

namespace ddpscope::store {
namespace {

std::vector<int> parse_ranks(const std::string& list) {
  std::vector<int> out;
  for (auto [first, last] : core::parse_index_ranges(list, "--ranks", 1'000'000, "a rank"))
    for (int r = first; r <= last; ++r) out.push_back(r);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t at(const char* flag, double s, int64_t origin) {
  if (!std::isfinite(s) || s < 0 || s > 1e7)
    throw InputError(std::string(flag) + ": " + std::to_string(s) +
                     " is not a number of seconds after the run's start (0 to 1e7)");
  return origin + int64_t(std::llround(s * 1e9));
}

}  // namespace

RunFilter parse_run_filter(const std::string& ranks, std::optional<double> since_s,
                           std::optional<double> until_s, int64_t run_start) {
  RunFilter f;
  if (!ranks.empty()) f.ranks = parse_ranks(ranks);
  if (since_s) f.since_ns = at("--since", *since_s, run_start);
  if (until_s) f.until_ns = at("--until", *until_s, run_start);
  if (since_s && until_s && f.until_ns <= f.since_ns)
    throw InputError("--until must be later than --since");
  return f;
}

void check_ranks_exist(const RunFilter& f, const std::vector<int>& recorded) {
  for (int r : f.ranks)
    if (std::binary_search(recorded.begin(), recorded.end(), r)) return;
  if (f.ranks.empty()) return;
  std::string have;
  for (int r : recorded) have += (have.empty() ? "" : ",") + std::to_string(r);
  throw InputError("--ranks: none of these ranks is in the run (it has " +
                   (have.empty() ? std::string("none") : have) + ")");
}

namespace {

// "0-3,7": runs of consecutive ranks as ranges.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string seconds_after(int64_t ns, int64_t start) {
  char buf[48];
  snprintf(buf, sizeof buf, "%.3f s", double(ns - start) / 1e9);
  return buf;
}

}  // namespace

std::string describe(const RunFilter& f, int64_t run_start) {
  std::string out;
  if (!f.ranks.empty()) out = "ranks " + rank_ranges(f.ranks);
  if (f.since_ns == INT64_MIN && f.until_ns == INT64_MAX) return out;
  out += out.empty() ? "" : ", ";
  out += f.since_ns == INT64_MIN ? "the start" : seconds_after(f.since_ns, run_start);
  out += " to ";
  out += f.until_ns == INT64_MAX ? "the end" : seconds_after(f.until_ns, run_start);
  return out + " after the start";
}

int64_t run_start_ns(RunReader& reader) {
  int64_t start = INT64_MAX;
  for (const auto& p : reader.processes())
    if (p.start_ns != kNoTime) start = std::min(start, p.start_ns);
  return start == INT64_MAX ? 0 : start;
}

}  // namespace ddpscope::store
