#include "profiler/store/run_filter.h"

#include <algorithm>
#include <cmath>
#include "profiler/core/input_error.h"

namespace ddpscope::store {
namespace {

int rank_number(const std::string& s, const std::string& list) {
  size_t used = 0;
  long v = -1;
  try {
    v = std::stol(s, &used);
  } catch (const std::exception&) {
  }
  if (s.empty() || used != s.size() || v < 0 || v > 1'000'000)
    throw InputError("--ranks " + list + ": '" + s + "' is not a rank (0 to 1000000)");
  return int(v);
}

std::vector<int> parse_ranks(const std::string& list) {
  std::vector<int> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t dash = item.find('-');
    int lo = rank_number(item.substr(0, dash), list);
    int hi = dash == std::string::npos ? lo : rank_number(item.substr(dash + 1), list);
    if (hi < lo) throw InputError("--ranks " + list + ": range '" + item + "' is empty");
    if (hi - lo > 1'000'000) throw InputError("--ranks " + list + ": range too large");
    for (int r = lo; r <= hi; ++r) out.push_back(r);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
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

int64_t run_start_ns(RunReader& reader) {
  int64_t start = INT64_MAX;
  for (const auto& p : reader.processes())
    if (p.start_ns != kNoTime) start = std::min(start, p.start_ns);
  return start == INT64_MAX ? 0 : start;
}

}  // namespace ddpscope::store
