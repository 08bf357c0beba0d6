// Reading a JSON input file the user named (a workload, a topology, a
// calibration): every way it can fail is one InputError naming the file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "profiler/core/input_error.h"

namespace ddpscope::tuner {

// Larger than any workload, topology or calibration we write: a path to
// /dev/zero or a log file fails at once instead of filling memory.
constexpr size_t kMaxJsonFileBytes = size_t(256) << 20;

// The file's text. `kind` names what it should be ("workload file") for the
// messages about a directory or a file far too large.
std::string read_json_text(const std::string& path, const std::string& kind);

// Parses `text` as read from `path`. Parse errors keep nlohmann's byte offset
// and reason, without its exception prefix and with the quoted input on one line.
nlohmann::json parse_json_text(const std::string& path, const std::string& text);

}  // namespace ddpscope::tuner
