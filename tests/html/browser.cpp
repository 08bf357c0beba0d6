#include "tests/html/browser.h"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "tests/support/subprocess.h"

namespace ddpscope::html_test {
namespace {

// A fresh profile per run, and everything that would reach the network off:
// the report must render from the file alone.
std::vector<std::string> chromium_argv(const std::string& profile) {
  if (!std::filesystem::exists(kChromium)) {
    throw std::runtime_error(std::string(kChromium) +
                             " is missing: install Debian's chromium package (the setup script "
                             "does) to run the HTML report's browser tests");
  }
  return {"timeout",
          "120",
          kChromium,
          "--headless",
          "--no-sandbox",  // required when run as root (CI containers)
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--hide-scrollbars",
          "--user-data-dir=" + profile};
}

testing::Result run_chromium(std::vector<std::string> extra, const std::string& html_path) {
  std::string profile = testing::temp_dir("chromium-profile");
  auto argv = chromium_argv(profile);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + std::filesystem::absolute(html_path).string());
  auto result = testing::run(argv, {{"HOME", profile}});
  std::filesystem::remove_all(profile);
  if (result.status != 0) {
    throw std::runtime_error("chromium exited with status " + std::to_string(result.status) + ": " +
                             result.err.substr(0, 2000));
  }
  return result;
}

}  // namespace

std::string dump_dom(const std::string& html_path) {
  return run_chromium({"--virtual-time-budget=5000", "--dump-dom"}, html_path).out;
}

void screenshot(const std::string& html_path, const std::string& png_path, int width, int height) {
  std::filesystem::remove(png_path);
  run_chromium({"--virtual-time-budget=5000", "--screenshot=" + png_path,
                "--window-size=" + std::to_string(width) + "," + std::to_string(height)},
               html_path);
}

std::string opening_tag(const std::string& dom, const std::string& id) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  size_t begin = dom.rfind('<', at), end = dom.find('>', at);
  return dom.substr(begin, end == std::string::npos ? std::string::npos : end + 1 - begin);
}

std::string section_rest(const std::string& dom, const std::string& id) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  size_t end = dom.find("</section>", at);
  return dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::string page_errors(const std::string& dom) {
  size_t at = dom.find("id=\"ddpscope-errors\"");
  if (at == std::string::npos) return "<no #ddpscope-errors element in the page>";
  size_t begin = dom.find('>', at) + 1, end = dom.find("</pre>", begin);
  return dom.substr(begin, end - begin);
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace ddpscope::html_test
