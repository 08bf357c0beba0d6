// Lists of whole numbers and ranges as flags take them ("0,3,8-15" for
// `--ranks`, "100-109" for `--iterations`): one parser, one wording of what
// is wrong (InputError naming the flag and the list).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ddpscope::core {

// The ranges of `list`, in the order given, each (first, last) with
// 0 <= first <= last <= max. `noun` says what a number is ("a rank").
std::vector<std::pair<int, int>> parse_index_ranges(const std::string& list,
                                                    const std::string& flag, int max,
                                                    const std::string& noun);

}  // namespace ddpscope::core
