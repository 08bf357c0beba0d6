#include "tuner/model/validation.h"

#include <algorithm>
#include <cmath>

#include "profiler/core/stats.h"
#include "tuner/model/model_sweep.h"

namespace ddpscope::tuner::model {
namespace {

bool same_setting(const SettingResult& a, const SettingResult& b) {
  return a.topology == b.topology && a.nranks == b.nranks &&
         std::fabs(a.setting.bucket_mb - b.setting.bucket_mb) < 1e-9 &&
         std::fabs(a.setting.first_bucket_mb - b.setting.first_bucket_mb) < 1e-9;
}

}  // namespace

Validation validate_model(const std::vector<SettingResult>& measured,
                          const std::vector<SettingResult>& predicted) {
  Validation v;
  std::vector<double> abs_errors;
  for (const auto& m : measured) {
    if (m.setting.backend == kModelBackendLabel || m.iterations.empty()) continue;
    for (const auto& p : predicted) {
      if (!same_setting(m, p)) continue;
      ValidationRow row{m.setting.backend, m.topology,       m.setting.bucket_mb,
                        m.iter_ms_median,  p.iter_ms_median, 0};
      row.error_pct = 100 * (row.predicted_ms - row.measured_ms) / row.measured_ms;
      abs_errors.push_back(std::fabs(row.error_pct));
      v.rows.push_back(row);
      break;
    }
  }
  if (abs_errors.empty()) return v;
  v.median_abs_error_pct = stats::median(abs_errors);
  v.max_abs_error_pct = *std::max_element(abs_errors.begin(), abs_errors.end());
  return v;
}

}  // namespace ddpscope::tuner::model
