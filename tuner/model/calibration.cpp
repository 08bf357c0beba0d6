#include "tuner/model/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "profiler/core/stats.h"
#include "tuner/model/least_squares.h"

namespace ddpscope::tuner::model {
namespace {

constexpr double kOverlapWins = 0.5;
// A size's ratio is kept within these: beyond them the point is not a
// residual of the fit but a broken measurement.
constexpr double kMinRatio = 0.25, kMaxRatio = 4;
constexpr int kCorrectionRounds = 4;

CostTerms observation_terms(const CommObservation& o) {
  CostTerms sum;
  for (double bytes : o.bucket_bytes) sum += terms_for(o.algorithm, o.nranks, bytes);
  return sum;
}

// Each bucket's all-reduce on its own: in the overlapped form a sum of
// buckets' maxima is not the maximum of their summed terms.
double predicted_seconds(const CommObservation& o, const LinkCost& link) {
  double s = 0;
  for (double bytes : o.bucket_bytes) s += terms_for(o.algorithm, o.nranks, bytes).seconds(link);
  return s;
}

// Σ ((predicted - measured) / measured)²: what both forms minimise.
double relative_sse(const std::vector<CommObservation>& obs, const LinkCost& link) {
  double sse = 0;
  for (const auto& o : obs) {
    const double r = (predicted_seconds(o, link) - o.seconds) / o.seconds;
    sse += r * r;
  }
  return sse;
}

// The additive form, α·steps + β·bytes + γ·reduced: non-negative least squares.
LinkCost fit_additive(const std::vector<CommObservation>& observations) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const auto& o : observations) {
    // Where the γ column is proportional to the β column the solver cannot
    // tell them apart and holds γ at 0: β then carries the reduction.
    CostTerms t = observation_terms(o);
    rows.push_back({t.alpha, t.beta_bytes, t.gamma_bytes});
    y.push_back(o.seconds);
    w.push_back(1.0 / (o.seconds * o.seconds));
  }
  auto x = nonnegative_least_squares(rows, y, w);
  return {x[0], x[1], x[2]};
}

// The overlapped form, max(α·steps, β·bytes) (reduction folded into β): each
// observation is paced by its message steps or by its bytes. For one
// assignment of observations to the two, α and β are each a one-parameter
// weighted least squares. Small buckets are the message-bound ones, so the
// assignments tried are the splits of the observations sorted by bytes per
// step, each then reassigned to the bound its fit makes the longer, until
// stable; the best fit of all is kept.
LinkCost fit_overlapped(const std::vector<CommObservation>& obs) {
  std::vector<CostTerms> terms;
  for (const auto& o : obs) terms.push_back(observation_terms(o));
  std::vector<size_t> order(obs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return terms[a].beta_bytes * terms[b].alpha < terms[b].beta_bytes * terms[a].alpha;
  });
  auto fit_given = [&](const std::vector<bool>& message_bound) {
    double na = 0, da = 0, nb = 0, db = 0;
    for (size_t i = 0; i < obs.size(); ++i) {
      const double ra = terms[i].alpha / obs[i].seconds, rb = terms[i].beta_bytes / obs[i].seconds;
      if (message_bound[i]) {
        na += ra;
        da += ra * ra;
      } else {
        nb += rb;
        db += rb * rb;
      }
    }
    return LinkCost{da > 0 ? na / da : 0, db > 0 ? nb / db : 0, 0, true};
  };
  LinkCost best{0, 0, 0, true};
  double best_sse = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k <= obs.size(); ++k) {
    std::vector<bool> bound(obs.size(), false);
    for (size_t j = 0; j < k; ++j) bound[order[j]] = true;
    for (int round = 0; round < 8; ++round) {
      const LinkCost c = fit_given(bound);
      if (const double e = relative_sse(obs, c); e < best_sse) best_sse = e, best = c;
      std::vector<bool> next(obs.size());
      for (size_t i = 0; i < obs.size(); ++i)
        next[i] = terms[i].alpha * c.alpha_s >= terms[i].beta_bytes * c.beta_s_per_byte;
      if (next == bound) break;
      bound = next;
    }
  }
  return best;
}

// The bucket size an observation measures: the one carrying most of its
// bytes (a sweep setting's first bucket and its partial last one differ).
double dominant_bytes(const CommObservation& o) {
  std::map<double, double> bytes;
  for (double b : o.bucket_bytes) bytes[b] += b;
  return std::max_element(bytes.begin(), bytes.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

// Measured / fitted per measured size. An observation's other buckets are
// taken at the ratios found so far, so a few rounds settle every size's
// (each observation's dominant size is measured by another observation's
// buckets only through them). Several observations of one size: the
// geometric mean.
SizeCorrection fit_by_size(const std::vector<CommObservation>& obs, const LinkCost& link) {
  SizeCorrection by_size;
  for (int round = 0; round < kCorrectionRounds; ++round) {
    std::map<double, std::pair<double, int>> log_sum;  // by bytes per step
    for (const auto& o : obs) {
      const double size = dominant_bytes(o);
      double own = 0, others = 0;
      for (double b : o.bucket_bytes) {
        const double t = terms_for(o.algorithm, o.nranks, b).seconds(link);
        if (b == size)
          own += t;
        else
          others += t * by_size.at(bytes_per_step(o.algorithm, o.nranks, b));
      }
      if (!(own > 0)) continue;
      const double ratio = std::clamp((o.seconds - others) / own, kMinRatio, kMaxRatio);
      auto& s = log_sum[bytes_per_step(o.algorithm, o.nranks, size)];
      s.first += std::log(ratio);
      s.second += 1;
    }
    std::vector<SizePoint> points;
    for (const auto& [x, s] : log_sum) points.push_back({x, std::exp(s.first / s.second)});
    by_size = SizeCorrection(points);
  }
  return by_size;
}

void check(const std::vector<CommObservation>& observations, int* distinct_sizes) {
  std::set<long long> sizes;
  for (const auto& o : observations) {
    if (o.nranks < 2 || o.bucket_bytes.empty() || !(o.seconds > 0))
      throw std::invalid_argument(
          "calibration: every observation needs 2+ ranks, a bucket and a positive time");
    sizes.insert(std::llround(o.mean_bucket_bytes()));
  }
  *distinct_sizes = int(sizes.size());
  if (sizes.size() < 3)
    throw std::invalid_argument("calibration: " + std::to_string(sizes.size()) +
                                " distinct bucket sizes measured; a fit needs at least 3");
}

}  // namespace

double CommObservation::mean_bucket_bytes() const {
  double sum = 0;
  for (double b : bucket_bytes) sum += b;
  return bucket_bytes.empty() ? 0 : sum / double(bucket_bytes.size());
}

LinkFit fit_link_cost(const std::vector<CommObservation>& observations) {
  LinkFit fit;
  check(observations, &fit.distinct_sizes);
  // The additive form unless the overlapped one explains the points clearly
  // better (half the squared error): the simpler, usual model by default.
  const LinkCost additive = fit_additive(observations);
  const LinkCost overlapped = fit_overlapped(observations);
  fit.cost =
      relative_sse(observations, overlapped) < kOverlapWins * relative_sse(observations, additive)
          ? overlapped
          : additive;
  fit.gamma_fitted = fit.cost.gamma_s_per_byte > 0;
  fit.observations = int(observations.size());
  std::vector<double> y;
  for (const auto& o : observations) y.push_back(o.seconds);

  double mean = 0;
  for (double s : y) mean += s / double(y.size());
  double ss_res = 0, ss_tot = 0;
  std::vector<double> rel;
  for (size_t i = 0; i < observations.size(); ++i) {
    const double predicted = predicted_seconds(observations[i], fit.cost);
    ss_res += (predicted - y[i]) * (predicted - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    rel.push_back(std::fabs(predicted - y[i]) / y[i]);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  fit.median_rel_error = stats::median(rel);
  fit.max_rel_error = *std::max_element(rel.begin(), rel.end());
  fit.by_size = fit_by_size(observations, fit.cost);
  return fit;
}

int calibrated_ranks(const Calibration& c) {
  if (c.ranks > 0) return c.ranks;
  return c.points.empty() ? 0 : c.points.front().nranks;
}

}  // namespace ddpscope::tuner::model
