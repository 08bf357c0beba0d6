// The HTML report: one self-contained file whose charts draw in a real browser
// (Debian's headless Chromium) without a script error, with every run string
// escaped, that stays small for large runs and degrades to messages for empty ones.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/html/browser.h"
#include "tests/html/html_fixture.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;
using namespace ddpscope::html_test;

namespace {

const char* const kCharts[] = {"chart-timeline", "chart-buckets", "chart-bandwidth",
                               "chart-overlap", "chart-heatmap"};

// What every rendered page must show after its scripts ran.
void check_page_ran(const std::string& dom) {
  INFO("page errors: " << page_errors(dom));
  CHECK(page_errors(dom).empty());
  CHECK(opening_tag(dom, "ddpscope-data").find("application/json") != std::string::npos);
  CHECK(dom.find("data-ready=\"true\"") != std::string::npos);
  for (const char* id : kCharts) {
    INFO("chart " << id);
    CHECK(opening_tag(dom, id).find("data-rendered=\"true\"") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("html report is one self-contained file with every run string escaped") {
  std::string html = read_text(render(sample_run(), testing::temp_dir("html-file")));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  // Three scripts: the error capture, the data, the charts; nothing injected.
  CHECK(count_of(html, "<script") == 3);
  CHECK(count_of(html, "</script>") == 3);
  CHECK(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;") !=
        std::string::npos);
  CHECK(html.find("fused\\u003c/script><b>x\\u003c/b>_kernel") != std::string::npos);
  CHECK(html.find("--model &quot;resnet50&quot;") != std::string::npos);
}

TEST_CASE("html report draws every chart in headless chromium without script errors") {
  std::string dom = dump_dom(render(sample_run(), testing::temp_dir("html-browser")));
  check_page_ran(dom);
  for (const char* id : kCharts) {
    INFO("chart " << id);
    std::string chart = section_rest(dom, id);
    CHECK(chart.find("<svg") != std::string::npos);
    CHECK(count_of(chart, "<rect") + count_of(chart, "<path") + count_of(chart, "<circle") > 3);
  }
  // 3 ranks x 3 sampled iterations x 24 spans, and 3 x 6 heatmap cells.
  CHECK(count_of(section_rest(dom, "chart-timeline"), "<rect") >= 216);
  CHECK(count_of(section_rest(dom, "chart-heatmap"), "<rect") >= 18);
  CHECK(count_of(dom, "<script") == 3);
  CHECK(dom.find("&lt;script&gt;alert(") != std::string::npos);
  CHECK(dom.find("Rank 2 enters collectives") != std::string::npos);
  CHECK(dom.find("<b>x</b>_kernel") == std::string::npos);
}

TEST_CASE("html report screenshot for a person to look at") {
  std::string dir = testing::temp_dir("html-shot");
  std::string png = std::string(HTML_TEST_BINARY_DIR) + "/html-report.png";
  screenshot(render(sample_run(), dir), png, 1400, 2400);
  REQUIRE(std::filesystem::exists(png));
  CHECK(std::filesystem::file_size(png) > 20000);
  CHECK(read_text(png).substr(1, 3) == "PNG");
}

TEST_CASE("html report of a run without iterations says so in its charts") {
  std::string html_path = render(empty_run(), testing::temp_dir("html-empty"));
  std::string dom = dump_dom(html_path);
  check_page_ran(dom);
  for (const char* id : {"chart-timeline", "chart-buckets", "chart-overlap", "chart-heatmap"}) {
    INFO("chart " << id);
    CHECK(section_rest(dom, id).find("no iterations detected") != std::string::npos);
  }
  CHECK(section_rest(dom, "chart-bandwidth").find("no collectives recorded") != std::string::npos);
  CHECK(dom.find("No iterations detected.") != std::string::npos);
}

TEST_CASE("html report of a large run stays small and still draws") {
  std::string html_path = render(large_run(64, 5000), testing::temp_dir("html-large"));
  auto size = std::filesystem::file_size(html_path);
  INFO("report size " << size << " bytes");
  CHECK(size < 2'000'000);
  std::string html = read_text(html_path);
  CHECK(html.find("Showing the first 500 of 5000 iterations") != std::string::npos);
  CHECK(html.find("further spans are not shown") != std::string::npos);
  check_page_ran(dump_dom(html_path));
}

TEST_CASE("html report shows a script error on the page instead of passing silently") {
  // The check the tests above rely on: break the data blob, see the error.
  std::string dir = testing::temp_dir("html-broken");
  std::string html = read_text(render(sample_run(), dir));
  std::string marker = "id=\"ddpscope-data\">";
  html.insert(html.find(marker) + marker.size(), "{broken");
  std::string broken = dir + "/broken.html";
  std::ofstream(broken) << html;
  std::string errors = page_errors(dump_dom(broken));
  CHECK(errors.find("JSON") != std::string::npos);
  CHECK(errors.find("the charts did not finish drawing") != std::string::npos);
}
