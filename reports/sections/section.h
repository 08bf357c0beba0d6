// One path from an analysis to every format: a section is one part of the
// report (hangs, stragglers, ...) and renders itself to each format it has a
// place in: the terminal, the JSON contract, CSV tables, the HTML page (its
// <section>, and a chart drawn by reports/html/*.js from its data). The
// sections are listed once (sections.cpp); each renderer puts them in its
// own order (its layout names them) and any it does not name after its own
// parts. A new analysis is its file in profiler/analysis/, its file here and
// one line in sections.cpp (docs/architecture.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::reports {

using analysis::RunAnalysis;

// A chart of the HTML page: its element id, heading and one-line hint.
struct HtmlChart {
  const char* id;
  const char* title;
  const char* hint;
};

// Each hook may be null: the section has no place in that format.
struct Section {
  const char* name;  // what layouts call it
  void (*text)(const RunAnalysis& run, std::ostream& out) = nullptr;
  // Adds its keys to the JSON report (users' scripts read them: never rename one, only add).
  void (*json)(const RunAnalysis& run, nlohmann::ordered_json& report) = nullptr;
  // Writes its tables into the CSV directory (csv_table.h).
  void (*csv)(const RunAnalysis& run, const std::string& dir) = nullptr;
  // Its <section> of the HTML page, every string escaped (html_parts.h).
  void (*html)(const RunAnalysis& run, std::ostream& out) = nullptr;
  // Its chart, if any (id null: none), and the data the page's script draws
  // it from, added under the section's own key.
  HtmlChart chart = {nullptr, nullptr, nullptr};
  void (*chart_data)(const RunAnalysis& run, nlohmann::json& data) = nullptr;
};

// Every section, in the order renderers put those their layout does not name.
const std::vector<Section>& sections();

// One entry of a renderer's layout: its own part (`part` set), or the
// section named `name` (`part` null).
template <class Hook>
struct LayoutEntry {
  const char* name;
  Hook part = nullptr;
};

// A renderer's parts in its order: its layout, the named sections at their
// place (those without `hook` skipped), then the sections it does not name.
template <class Hook>
std::vector<Hook> in_layout(const std::vector<LayoutEntry<Hook>>& layout, Hook Section::*hook) {
  std::vector<Hook> parts;
  std::vector<std::string_view> named;
  for (const auto& e : layout) {
    if (e.part) {
      parts.push_back(e.part);
      continue;
    }
    named.push_back(e.name);
    for (const auto& s : sections())
      if (e.name == std::string_view(s.name) && s.*hook) parts.push_back(s.*hook);
  }
  for (const auto& s : sections()) {
    bool placed = false;
    for (auto n : named) placed = placed || n == s.name;
    if (!placed && s.*hook) parts.push_back(s.*hook);
  }
  return parts;
}

}  // namespace ddpscope::reports
