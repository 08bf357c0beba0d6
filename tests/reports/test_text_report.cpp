// The terminal report's rank table: every rank on a small job; past 16 ranks
// the latest 16, latest first, and one line for the rest (a straggler among
// 1,024 ranks must be on screen, not 1,000 lines up).
#include <catch2/catch.hpp>
#include <sstream>

#include "reports/text_analysis.h"

using namespace ddpscope;

namespace {

analysis::RunAnalysis run_of(int ranks, int straggler) {
  analysis::RunAnalysis run;
  for (int r = 0; r < ranks; ++r) {
    analysis::RankStats s;
    s.rank = r;
    s.host = "node-" + std::to_string(r / 8);
    s.late_ms_median = r == straggler ? 12.5 : 0.01 + 0.001 * (r % 10);
    run.ranks.push_back(s);
  }
  return run;
}

std::vector<std::string> rank_rows(const std::string& text) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  bool in_table = false;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("rank  host", 0) == 0) {
      in_table = true;
      continue;
    }
    if (in_table && l.empty()) break;
    if (in_table) rows.push_back(l);
  }
  return rows;
}

}  // namespace

TEST_CASE("text report: 16 ranks or fewer are all listed, in rank order") {
  std::ostringstream out;
  reports::print_analysis(run_of(16, 9), out);
  auto rows = rank_rows(out.str());
  REQUIRE(rows.size() == 16);
  CHECK(rows.front().rfind("0 ", 0) == 0);
  CHECK(rows.back().rfind("15 ", 0) == 0);
  CHECK(out.str().find("more ranks") == std::string::npos);
}

TEST_CASE(
    "text report: at 1,024 ranks the 16 latest, the straggler first, and one line for the rest") {
  std::ostringstream out;
  reports::print_analysis(run_of(1024, 617), out);
  const std::string text = out.str();
  CHECK(text.find("ranks: the 16 latest of 1024 (by median lateness)") != std::string::npos);
  auto rows = rank_rows(text);
  REQUIRE(rows.size() == 17);
  CHECK(rows.front().rfind("617 ", 0) == 0);
  CHECK(rows.front().find("12.500") != std::string::npos);
  // The next 15 are the ranks ending in 9 (0.019 ms), the latest of the others.
  for (size_t i = 1; i < 16; ++i) CHECK(rows[i].find(" 0.019 ") != std::string::npos);
  CHECK(rows.back() == "... 1008 more ranks, late ms med 0.010 to 0.019 (all in --csv and --json)");
}
