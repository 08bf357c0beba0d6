#include "tuner/model/calibration.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "tuner/model/least_squares.h"

namespace ddpscope::tuner::model {
namespace {

CostTerms observation_terms(const CommObservation& o) {
  CostTerms sum;
  for (double bytes : o.bucket_bytes) sum += terms_for(o.algorithm, o.nranks, bytes);
  return sum;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
  fit.cost = {x[0], x[1], x[2]};
  fit.gamma_fitted = x[2] > 0;
  fit.observations = int(observations.size());

  double mean = 0;
  for (double s : y) mean += s / double(y.size());
  double ss_res = 0, ss_tot = 0;
  std::vector<double> rel;
  for (size_t i = 0; i < observations.size(); ++i) {
    const double predicted = observation_terms(observations[i]).seconds(fit.cost);
    ss_res += (predicted - y[i]) * (predicted - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    rel.push_back(std::fabs(predicted - y[i]) / y[i]);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  fit.median_rel_error = median(rel);
  fit.max_rel_error = *std::max_element(rel.begin(), rel.end());
  return fit;
}

}  // namespace ddpscope::tuner::model
