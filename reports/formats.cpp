#include "reports/formats.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"
#include "reports/kineto/kineto_trace.h"

namespace fs = std::filesystem;

namespace ddpscope::reports {

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats = {
      {"--html", "write a self-contained HTML report", make_html_renderer, core::check_output_path},
      {"--csv", "write one CSV file per table into this directory", make_csv_renderer,
       check_csv_dir},
      {"--json", "write the analysis as JSON (docs/analysis.md)", make_json_renderer,
       core::check_output_path},
      {"--trace",
       "write a trace for ui.perfetto.dev: Perfetto protobuf if the name ends in .pftrace, "
       ".perfetto-trace or .pb, Chrome trace-event JSON if .json; any other name is protobuf "
       "when the run has more than " +
           std::to_string(kJsonTraceMaxRows) + " event rows (docs/trace.md)",
       make_trace_renderer, core::check_output_path, true, true},
      {"--kineto",
       "write one PyTorch-profiler (Kineto) trace per rank into this directory, for HTA "
       "(Holistic Trace Analysis): DIR/rank-<R>.json (docs/trace.md)",
       make_kineto_renderer, check_kineto_dir, true},
  };
  return formats;
}

bool walks_collectives(const std::vector<std::string>& targets) {
  const auto& formats = report_formats();
  for (size_t i = 0; i < formats.size(); ++i)
    if (!targets[i].empty() && formats[i].walks_collectives) return true;
  return false;
}

std::vector<std::string> write_reports(const ReportInput& input,
                                       const std::vector<std::string>& targets) {
  const auto& formats = report_formats();
  std::vector<std::string> written;
  std::vector<std::string> done(formats.size());
  std::vector<std::exception_ptr> failed(formats.size());
  // Every format that reads the run (`reads_run`), or every other: a
  // failure stops the writers after it on the same thread only.
  auto write = [&](bool reads_run) {
    for (size_t i = 0; i < formats.size(); ++i) {
      if (targets[i].empty() || formats[i].reads_run != reads_run) continue;
      try {
        auto renderer = formats[i].make();
        renderer->write(input, targets[i]);  // runtime_error names the target
        const std::string note = renderer->note();
        done[i] = targets[i] + (note.empty() ? "" : " (" + note + ")");
      } catch (...) {
        failed[i] = std::current_exception();
        return;
      }
    }
  };
  {
    std::future<void> beside = std::async(std::launch::async, write, false);
    write(true);
  }  // the future waits for its thread
  for (size_t i = 0; i < formats.size(); ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    if (!done[i].empty()) written.push_back(done[i]);
  }
  return written;
}

void check_output_dir(const std::string& dir, const std::string& layout, bool parents) {
  if (dir.empty()) throw InputError("an output directory is empty");
  std::error_code ec;
  fs::path where = dir;
  if (fs::exists(where, ec) && !fs::is_directory(where, ec))
    throw InputError(dir, "not a directory (" + layout + ")");
  // Where the directory will be made: its parent, or with `parents` its
  // nearest existing ancestor.
  while (!fs::exists(where, ec)) {
    fs::path parent = where.parent_path().empty() ? "." : where.parent_path();
    if (!parents && !fs::is_directory(parent, ec))
      throw InputError(dir, "cannot create: the directory " + parent.string() + " does not exist");
    where = parent;
  }
  if (!fs::is_directory(where, ec))
    throw InputError(dir, "cannot create: " + where.string() + " is not a directory");
  if (access(where.c_str(), W_OK | X_OK) != 0)
    throw InputError(dir, "cannot write in " + where.string() + " (" + strerror(errno) + ")");
}

}  // namespace ddpscope::reports
