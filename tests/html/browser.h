// Headless Chromium for the HTML report tests, and reading its dumped DOM.
#pragma once

#include <string>

namespace ddpscope::html_test {

constexpr const char* kChromium = "/usr/bin/chromium";

// The DOM after the page's scripts ran. Throws std::runtime_error with a clear
// line when Chromium is missing or fails.
std::string dump_dom(const std::string& html_path);

// A PNG of the page at `width` x `height` CSS pixels.
void screenshot(const std::string& html_path, const std::string& png_path, int width, int height);

// The opening tag of the element with id="`id`" ("" if none).
std::string opening_tag(const std::string& dom, const std::string& id);

// The markup from that element's opening tag to the end of its <section>.
std::string section_rest(const std::string& dom, const std::string& id);

// The text of <pre id="ddpscope-errors"> (script errors the page caught).
std::string page_errors(const std::string& dom);

size_t count_of(const std::string& text, const std::string& needle);

}  // namespace ddpscope::html_test
