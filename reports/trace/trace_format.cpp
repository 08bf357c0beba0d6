// The trace renderer: picks the format (renderer.h: trace_format_for) and
// writes the file all-or-nothing.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <stdexcept>

#include "profiler/core/atomic_file.h"
#include "profiler/core/input_error.h"
#include "reports/renderer.h"
#include "reports/trace/trace_events.h"
#include "reports/trace/trace_writers.h"

namespace ddpscope::reports {
namespace {

bool ends_with(const std::string& name, std::string_view suffix) {
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

class TraceRenderer : public Renderer {
 public:
  explicit TraceRenderer(int64_t json_max_rows) : json_max_rows_(json_max_rows) {}
  void write(const ReportInput& input, const std::string& target) override {
    core::write_atomically(target, [&](std::ostream& os) {
      try {
        format_ = trace_format_for(target, trace::event_rows(input.reader), json_max_rows_);
        if (format_ == TraceFormat::perfetto)
          trace::write_perfetto_trace(input.reader, os, input.collectives, input.labels);
        else
          trace::write_json_trace(input.reader, os, input.collectives, input.labels);
      } catch (const InputError&) {
        throw;  // a damaged database is bad input (exit 2): its message names it
      } catch (const std::exception& e) {
        // A database error names the database; the user asked about the target.
        throw std::runtime_error(target + ": " + e.what());
      }
    });
  }
  std::string note() const override {
    return format_ == TraceFormat::perfetto ? "Perfetto protobuf" : "Chrome trace-event JSON";
  }

 private:
  int64_t json_max_rows_;
  TraceFormat format_ = TraceFormat::json;
};

}  // namespace

TraceFormat trace_format_for(const std::string& target, int64_t event_rows, int64_t json_max_rows) {
  std::string name = std::filesystem::path(target).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (std::string_view ext : {".pftrace", ".perfetto-trace", ".pb"})
    if (ends_with(name, ext)) return TraceFormat::perfetto;
  if (ends_with(name, ".json")) return TraceFormat::json;
  return event_rows > json_max_rows ? TraceFormat::perfetto : TraceFormat::json;
}

std::unique_ptr<Renderer> make_trace_renderer_up_to(int64_t json_max_rows) {
  return std::make_unique<TraceRenderer>(json_max_rows);
}

std::unique_ptr<Renderer> make_trace_renderer() {
  return make_trace_renderer_up_to(kJsonTraceMaxRows);
}

}  // namespace ddpscope::reports
