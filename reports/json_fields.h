// Values of the JSON report (json.cpp and the sections' JSON): numbers
// rounded, undefined figures null.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "profiler/core/units.h"

namespace ddpscope::reports::json_fields {

using Json = nlohmann::ordered_json;

// JSON has no NaN or infinity: an undefined figure (e.g. a bandwidth with no
// duration) is null, which every parser accepts.
inline Json num(double v) { return std::isfinite(v) ? Json(round_significant(v)) : Json(nullptr); }

inline Json text(std::string_view v) { return Json(std::string(v)); }

// -1 (not reported) becomes null.
inline Json known(double v) { return v < 0 ? Json() : num(v); }

// An index, or null for -1 (none).
inline Json index_or_null(int i) { return i >= 0 ? Json(i) : Json(); }

}  // namespace ddpscope::reports::json_fields
