#include "profiler/analysis/clock_sync.h"

#include <algorithm>
#include <cmath>

#include "profiler/core/stats.h"

namespace ddpscope::analysis {
namespace {

// Enough stretches to follow a drift, few enough that each median rests on
// several completions even in a short run.
constexpr size_t kWindows = 64;
constexpr size_t kMinPerWindow = 8;

struct Sample {
  double t, d;  // when (median end), how much later this host says it ended
};

// Medians per stretch of equal count, in time order.
std::vector<Sample> stretch_medians(std::vector<Sample> s) {
  std::sort(s.begin(), s.end(), [](auto& a, auto& b) { return a.t < b.t; });
  size_t windows = std::clamp<size_t>(s.size() / kMinPerWindow, 1, kWindows);
  std::vector<Sample> out;
  for (size_t w = 0; w < windows; ++w) {
    size_t lo = s.size() * w / windows, hi = s.size() * (w + 1) / windows;
    std::vector<double> t, d;
    for (size_t i = lo; i < hi; ++i) t.push_back(s[i].t), d.push_back(s[i].d);
    if (!t.empty()) out.push_back({stats::median(t), stats::median(d)});
  }
  return out;
}

// Least squares through the stretch medians; one stretch: offset only.
HostClock fit_line(const std::vector<Sample>& m, int64_t t0, int samples) {
  HostClock h;
  h.t0 = t0;
  h.samples = samples;
  double n = double(m.size()), st = 0, sd = 0, stt = 0, std_ = 0;
  for (const auto& p : m) {
    double x = p.t - double(t0);
    st += x, sd += p.d, stt += x * x, std_ += x * p.d;
  }
  double var = stt - st * st / n;
  h.drift = m.size() > 1 && var > 0 ? (std_ - st * sd / n) / var : 0;
  h.offset_ns = (sd - h.drift * st) / n;
  for (const auto& p : m)
    h.residual_ns = std::max(h.residual_ns, std::fabs(p.d - h.at(int64_t(p.t))));
  return h;
}

}  // namespace

HostCorrection ClockSync::of(const std::string& host) const {
  auto h = hosts.find(host), r = hosts.find(reference);
  if (host == reference || h == hosts.end()) return {};
  return {&h->second, r == hosts.end() ? nullptr : &r->second};
}

ClockSync fit_clocks(const std::vector<std::vector<const Call*>>& groups,
                     const std::map<int, std::string>& host_of) {
  ClockSync out;
  out.reference = host_of.count(0) ? host_of.at(0) : "";
  std::map<std::string, std::vector<Sample>> samples;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& g : groups) {
    std::vector<double> ends;
    for (const Call* c : g) ends.push_back(double(c->end));
    double mid = stats::median(ends);
    first = std::min(first, int64_t(mid)), last = std::max(last, int64_t(mid));
    std::map<std::string, std::vector<double>> per_host;
    for (const Call* c : g)
      per_host[host_of.count(c->rank) ? host_of.at(c->rank) : ""].push_back(double(c->end) - mid);
    for (auto& [host, d] : per_host) samples[host].push_back({mid, stats::median(d)});
  }
  if (samples.size() < 2) return out;  // one host: one clock, nothing to correct
  int64_t t0 = first + (last - first) / 2;
  for (auto& [host, s] : samples) out.hosts[host] = fit_line(stretch_medians(s), t0, int(s.size()));
  return out;
}

}  // namespace ddpscope::analysis
