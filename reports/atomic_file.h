// Writing an output file all-or-nothing: content goes to `<path>.tmp-<pid>`,
// which is renamed over `path` only once complete.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ddpscope::reports {

// Calls `fill` with a stream into the temporary file; throws std::runtime_error
// ("<path>: <why>") if the file cannot be written. On any failure the temporary
// file is removed and `path` is untouched.
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace ddpscope::reports
