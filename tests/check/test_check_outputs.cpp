// The outputs of `ddpscope check` on a constructed result: the terminal table
// names each regression; JUnit and Markdown escape what they must and are
// written all-or-nothing. (tests/check/test_check.py parses real JUnit files
// with an XML parser.)
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/regression/renderers.h"

using namespace ddpscope::regression;
namespace fs = std::filesystem;

namespace {

Verdict verdict(const std::string& family, const std::string& label, const std::string& unit,
                Better better) {
  Verdict v;
  v.kind = "recorded run";
  v.family = v.key = family;
  v.label = label;
  v.unit = unit;
  v.better = better;
  return v;
}

CheckResult awkward_result() {
  CheckResult r;
  r.baseline_sources = {"base <1>.db"};
  r.candidate_sources = {"cand & co.db"};
  r.level = 0.975;
  r.decided = 2;
  Verdict slow = verdict("comm", "communication per iteration", "ms", Better::lower);
  slow.status = Status::regression;
  slow.baseline = 10;
  slow.candidate = 20;
  slow.change = 1;
  slow.ratio = {1.8, 2.2};
  slow.baseline_runs = slow.candidate_runs = 1;
  Verdict odd = verdict("busbw", "busbw \"quoted\" | <piped> & 'so on'", "GB/s", Better::higher);
  odd.status = Status::too_few_samples;
  r.verdicts = {slow, odd};
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("the terminal table names the regression with its figures") {
  std::ostringstream out;
  print_check(awkward_result(), out);
  std::string text = out.str();
  CHECK(text.find("regression  communication per iteration: 10.00 ms -> 20.00 ms (+100.0%; "
                  "97.5% interval +80.0% .. +120.0%") != std::string::npos);
  CHECK(text.find("REGRESSION: 1 of 2 metrics worse by more than 5%") != std::string::npos);
  CHECK(text.find("run-to-run noise not measured") != std::string::npos);
}

TEST_CASE("JUnit escapes labels and sources, one failure per regression") {
  auto dir = fs::temp_directory_path() / ("check-junit-" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto path = (dir / "check.xml").string();
  write_junit(awkward_result(), path);
  std::string xml = slurp(path);
  CHECK(xml.find("failures=\"1\"") != std::string::npos);
  CHECK(xml.find("<failure type=\"regression\"") != std::string::npos);
  CHECK(xml.find("busbw &quot;quoted&quot; | &lt;piped&gt; &amp; &apos;so on&apos;") !=
        std::string::npos);
  CHECK(xml.find("cand &amp; co.db") != std::string::npos);
  CHECK(xml.find("<skipped message=\"too few samples\"/>") != std::string::npos);
  SECTION("an unwritable target throws, naming it, and leaves nothing behind") {
    auto bad = (dir / "missing" / "check.xml").string();
    CHECK_THROWS_WITH(write_junit(awkward_result(), bad), Catch::Contains(bad));
    CHECK_FALSE(fs::exists(dir / "missing"));
  }
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
  fs::remove_all(dir);
}

TEST_CASE("Markdown escapes table cells and leads with the regression") {
  auto path = (fs::temp_directory_path() / ("check-" + std::to_string(getpid()) + ".md")).string();
  write_markdown(awkward_result(), path);
  std::string md = slurp(path);
  CHECK(md.rfind("### ddpscope check: communication regression", 0) == 0);
  CHECK(md.find("- **communication per iteration: 10.00 ms -> 20.00 ms") != std::string::npos);
  CHECK(md.find("busbw \"quoted\" \\| <piped>") != std::string::npos);
  fs::remove(path);
}
