#include "profiler/core/index_ranges.h"

#include "profiler/core/input_error.h"

namespace ddpscope::core {
namespace {

int whole_number(const std::string& s, const std::string& context, int max,
                 const std::string& noun) {
  size_t used = 0;
  long v = -1;
  try {
    v = std::stol(s, &used);
  } catch (const std::exception&) {
  }
  if (s.empty() || used != s.size() || v < 0 || v > max)
    throw InputError(context + ": '" + s + "' is not " + noun + " (0 to " + std::to_string(max) +
                     ")");
  return int(v);
}

}  // namespace

std::vector<std::pair<int, int>> parse_index_ranges(const std::string& list,
                                                    const std::string& flag, int max,
                                                    const std::string& noun) {
  const std::string context = flag + " " + list;
  std::vector<std::pair<int, int>> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    size_t dash = item.find('-');
    int first = whole_number(item.substr(0, dash), context, max, noun);
    int last =
        dash == std::string::npos ? first : whole_number(item.substr(dash + 1), context, max, noun);
    if (last < first) throw InputError(context + ": range '" + item + "' is empty");
    out.emplace_back(first, last);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace ddpscope::core
