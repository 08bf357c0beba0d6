// tune recommends a bucket size over DDP's default only when it beats the
// default by more than the noise (check's bootstrap); otherwise it says the
// default is within noise of the fastest (issue 17, item 5).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "tuner/report/tune_text.h"
#include "tuner/sweep.h"

using namespace ddpscope;
using namespace ddpscope::tuner;

namespace {

// A setting's result with `n` iterations around `centre_ms`, spread +-`spread`.
SettingResult setting(double bucket_mb, double centre_ms, double spread, int n = 40) {
  SettingResult r;
  r.setting = {"gloo", bucket_mb, 1};
  for (int i = 0; i < n; ++i) {
    // A fixed, interleaved pattern: no randomness, the same verdict every run.
    double offset = spread * std::sin(1.7 * i);
    r.iterations.push_back({centre_ms + offset, 1, 0.5});
  }
  std::vector<double> ms;
  for (auto& s : r.iterations) ms.push_back(s.iter_ms);
  std::sort(ms.begin(), ms.end());
  r.iter_ms_median = (ms[n / 2 - 1] + ms[n / 2]) / 2;
  r.iter_ms_p25 = ms[n / 4];
  r.iter_ms_p75 = ms[3 * n / 4];
  return r;
}

std::string text_of(const TuneRecommendation& rec) {
  std::ostringstream out;
  report::print_tune_recommendation(rec, out);
  return out.str();
}

}  // namespace

TEST_CASE("a bucket size inside the noise of DDP's default: keep the default") {
  // 1 % apart with a +-10 % spread: the fastest median is luck.
  auto rec = recommend({setting(25, 100, 10), setting(5, 99, 10)});
  CHECK(rec.fastest.bucket_mb == 5);
  REQUIRE(rec.compared);
  CHECK(rec.within_noise);
  CHECK(rec.best.bucket_mb == 25);
  CHECK(rec.ratio_lo < 1);
  CHECK(rec.ratio_hi >= 1);
  CHECK_THAT(text_of(rec), Catch::Contains("within noise of the fastest"));
  CHECK_THAT(text_of(rec), Catch::Contains("keep the default"));
}

TEST_CASE("a bucket size clearly faster than DDP's default is recommended, with its interval") {
  auto rec = recommend({setting(25, 100, 2), setting(5, 80, 2)});
  REQUIRE(rec.compared);
  CHECK_FALSE(rec.within_noise);
  CHECK(rec.best.bucket_mb == 5);
  CHECK(rec.ratio_hi < 1);
  CHECK(rec.ratio_lo > 0.7);  // about 0.8
  CHECK_THAT(text_of(rec), Catch::Contains("interval of the gain"));
}

TEST_CASE("the default itself fastest, or not measured: nothing to compare") {
  auto fastest_default = recommend({setting(25, 80, 2), setting(5, 100, 2)});
  CHECK_FALSE(fastest_default.compared);
  CHECK(fastest_default.best.bucket_mb == 25);
  auto no_default = recommend({setting(10, 90, 2), setting(5, 100, 2)});
  CHECK_FALSE(no_default.compared);
  CHECK(no_default.best.bucket_mb == 10);
  CHECK_THAT(text_of(no_default), Catch::Contains("was not measured"));
}
