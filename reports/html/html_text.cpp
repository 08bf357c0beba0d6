// Escaping and number formatting for the HTML report.
#include <cmath>
#include <cstdio>

#include "reports/html/html_parts.h"

namespace ddpscope::reports::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
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
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe(const nlohmann::json& j) {
  // `replace`: a command line or kernel name with broken UTF-8 must not make
  // the whole report fail.
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    // Inside JSON, '<' only occurs in strings, where "\u003c" means the same.
    if (text[i] == '<' && (text.compare(i, 2, "</") == 0 || text.compare(i, 4, "<!--") == 0)) {
      out += "\\u003c";
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  if (std::fabs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0;  // no "-0.00"
  char buf[64];
  snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fixed(bytes, 0) + " B" : fixed(bytes, 1) + " " + units[u];
}

double rounded(double v, int significant) {
  if (!std::isfinite(v) || v == 0) return std::isfinite(v) ? v : 0;
  double magnitude = std::pow(10.0, significant - 1 - int(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * magnitude) / magnitude;
}

}  // namespace ddpscope::reports::html
