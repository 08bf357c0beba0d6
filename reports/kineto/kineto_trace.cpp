// The Kineto renderer: the directory's checks, and one trace per rank written
// all-or-nothing (kineto_events.cpp writes each).
#include "reports/kineto/kineto_trace.h"

#include <filesystem>
#include <regex>
#include <set>
#include <stdexcept>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"
#include "reports/formats.h"
#include "reports/trace/trace_events.h"

namespace fs = std::filesystem;

namespace ddpscope::reports {
namespace {

bool is_trace_name(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".gz");
}

// A trace HTA would read from `dir` that is not one we are about to write:
// not named rank-<N>.json, or (when `ranks` is given) for a rank not in it.
std::string foreign_trace(const std::string& dir, const std::set<int>* ranks) {
  static const std::regex ours(R"(rank-(\d{1,9})\.json)");
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!is_trace_name(name)) continue;
    std::smatch m;
    if (!std::regex_match(name, m, ours)) return name;
    if (ranks && !ranks->count(std::stoi(m[1].str()))) return name;
  }
  return "";
}

void check_dir(const std::string& dir, const std::set<int>* ranks) {
  check_output_dir(dir, "the Kineto traces are one file per rank", /*parents=*/false);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;  // not there yet: nothing foreign in it
  std::string other = foreign_trace(dir, ranks);
  if (!other.empty())
    throw InputError(dir, "holds " + other +
                              ", which HTA would read as one more rank's trace: give an empty or "
                              "new directory");
}

class KinetoRenderer : public Renderer {
 public:
  void write(const ReportInput& input, const std::string& target) override {
    auto processes = input.reader.processes();
    std::set<int> ranks;
    for (const auto& p : processes) ranks.insert(p.rank);
    check_dir(target, &ranks);
    std::error_code ec;
    bool created = fs::create_directory(target, ec);
    if (ec) throw InputError(target, "cannot create the directory (" + ec.message() + ")");
    std::vector<std::string> written;
    try {
      int64_t origin = trace::trace_origin_ns(input.reader);
      for (const auto& p : processes) {
        std::string path = kineto_file(target, p.rank);
        core::write_atomically(
            path, [&](std::ostream& os) { kineto::write_rank_trace(input, p, origin, os); });
        written.push_back(path);
      }
    } catch (...) {
      // All or nothing: no rank's trace without the others.
      for (const auto& path : written) fs::remove(path, ec);
      if (created) fs::remove(target, ec);
      rethrow(target);
    }
    ranks_ = written.size();
  }
  std::string note() const override {
    return "Kineto JSON, " + std::to_string(ranks_) + (ranks_ == 1 ? " rank" : " ranks");
  }

 private:
  [[noreturn]] static void rethrow(const std::string& target) {
    try {
      throw;
    } catch (const InputError&) {
      throw;  // a damaged database is bad input (exit 2): its message names it
    } catch (const std::exception& e) {
      throw std::runtime_error(target + ": " + e.what());
    }
  }
  size_t ranks_ = 0;
};

}  // namespace

std::string kineto_file(const std::string& dir, int rank) {
  return (fs::path(dir) / ("rank-" + std::to_string(rank) + ".json")).string();
}

void check_kineto_dir(const std::string& dir) { check_dir(dir, nullptr); }

std::unique_ptr<Renderer> make_kineto_renderer() { return std::make_unique<KinetoRenderer>(); }

}  // namespace ddpscope::reports
