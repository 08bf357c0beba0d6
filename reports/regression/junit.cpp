// JUnit XML for CI systems (GitHub Actions test reporters, GitLab's
// `artifacts:reports:junit`): one <testsuite> per kind compared, one
// <testcase> per metric; a regression is a <failure>, a metric that could not
// be decided is <skipped>.
#include <map>

#include "profiler/core/atomic_file.h"
#include "reports/regression/renderers.h"
#include "reports/regression/verdict_text.h"

namespace ddpscope::regression {
namespace {

// Attribute-safe text; control characters other than tab and newline are not
// allowed in XML 1.0 at all, so they are dropped.
std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\t':
        out += "&#9;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out;
}

void write_case(const Verdict& v, const CheckResult& r, std::ostream& out) {
  out << "    <testcase classname=\"ddpscope.check." << xml(v.family) << "\" name=\""
      << xml(v.label) << "\" time=\"0\">\n";
  if (v.status == Status::regression) {
    std::string line = xml(verdict_line(v, r));
    out << "      <failure type=\"regression\" message=\"" << line << "\">" << line
        << "</failure>\n";
  } else if (!decided(v))
    out << "      <skipped message=\"" << xml(name_of(v.status)) << "\"/>\n";
  else
    out << "      <system-out>" << xml(std::string(name_of(v.status)) + ": " + verdict_line(v, r))
        << "</system-out>\n";
  out << "    </testcase>\n";
}

void write_suite(const std::string& kind, const std::vector<const Verdict*>& verdicts,
                 const CheckResult& r, std::ostream& out) {
  int failures = 0, skips = 0;
  for (const auto* v : verdicts) {
    failures += v->status == Status::regression;
    skips += !decided(*v);
  }
  out << "  <testsuite name=\"ddpscope check: " << xml(kind) << "\" tests=\"" << verdicts.size()
      << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\"" << skips << "\">\n";
  out << "    <properties>\n";
  for (const auto& s : r.baseline_sources)
    out << "      <property name=\"baseline\" value=\"" << xml(s) << "\"/>\n";
  for (const auto& s : r.candidate_sources)
    out << "      <property name=\"candidate\" value=\"" << xml(s) << "\"/>\n";
  out << "      <property name=\"tolerance\" value=\"" << r.options.tolerance << "\"/>\n"
      << "      <property name=\"confidence\" value=\"" << r.options.confidence << "\"/>\n"
      << "    </properties>\n";
  for (const auto* v : verdicts) write_case(*v, r, out);
  out << "  </testsuite>\n";
}

}  // namespace

void write_junit(const CheckResult& r, const std::string& path) {
  std::map<std::string, std::vector<const Verdict*>> by_kind;
  for (const auto& v : r.verdicts) by_kind[v.kind].push_back(&v);
  core::write_atomically(path, [&](std::ostream& out) {
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"ddpscope check\" tests=\"" << r.verdicts.size() << "\" failures=\""
        << r.count(Status::regression) << "\">\n";
    for (const auto& [kind, verdicts] : by_kind) write_suite(kind, verdicts, r, out);
    out << "</testsuites>\n";
  });
}

}  // namespace ddpscope::regression
