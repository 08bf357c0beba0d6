// Bad input: a file or flag the user gave that cannot be used (missing,
// unreadable, foreign, damaged, malformed, out of range). The one error type
// for it in every library (store, analysis, regression, tuner, reports):
// `ddpscope` catches it in one place (cli/main.cpp), prints
// "ddpscope: <what>" and exits 2. Everything else that fails is a runtime
// failure (exit 1).
#pragma once

#include <stdexcept>
#include <string>

namespace ddpscope {

class InputError : public std::runtime_error {
 public:
  // `what` names the file or flag and says what is wrong with it.
  explicit InputError(const std::string& what) : std::runtime_error(one_line(what)) {}
  // "<source>: <problem>", e.g. ("run.db", "not an SQLite database").
  InputError(const std::string& source, const std::string& problem)
      : std::runtime_error(one_line(source + ": " + problem)) {}

 private:
  // Messages quote the input (a JSON excerpt, a file name): a control
  // character there would break the promise of one line on the terminal.
  static std::string one_line(std::string s) {
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return s;
  }
};

}  // namespace ddpscope
