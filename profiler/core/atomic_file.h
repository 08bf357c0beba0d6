// Writing an output file all-or-nothing: content goes to `<path>.tmp-<pid>`,
// which is renamed over `path` only once complete, so a reader (a rank polling
// for a peer's file, a user's script, a later `report`) never sees half a file
// and a failed write leaves nothing behind. The one such writer: reports,
// the store's merge and tune databases, calibration files and the tuner's rank
// files all go through it.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace ddpscope::core {

// An output path the user gave that cannot take a file (empty, a directory, in
// a missing or read-only folder) throws InputError naming it. Commands call it
// for every output before their work, so a typo costs nothing; the writers
// below call it again before they write.
void check_output_path(const std::string& path);

// Calls `fill` with the temporary path to create (e.g. a SQLite database),
// then renames it over `path`. A `path` that cannot take a file (a directory,
// a missing or read-only folder) throws InputError naming it before `fill`
// runs. On any failure the temporary file is removed, `path` is untouched and
// the exception goes on; a failed rename becomes std::runtime_error("<path>: <why>").
void replace_atomically(const std::string& path,
                        const std::function<void(const std::string& tmp)>& fill);

// Calls `fill` with a stream into the temporary file; InputError if the file
// cannot be created, std::runtime_error ("<path>: <why>") if writing fails.
void write_atomically(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace ddpscope::core
