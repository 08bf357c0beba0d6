#include "injector/runtime/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "profiler/core/inject_options.h"

namespace ddpscope::inject {

namespace {

// Warnings say the recording is incomplete and always print; the rest are
// notices about what was measured how, which DDPSCOPE_QUIET=1 silences.
bool is_warning(Notice kind) {
  return kind == Notice::no_output || kind == Notice::write_failed ||
         kind == Notice::no_thread_buffer;
}

}  // namespace

void notice_once(Notice kind, const char* fmt, ...) {
  static const bool quiet = inject_option("DDPSCOPE_QUIET") == "1";
  if (quiet && !is_warning(kind)) return;
  static std::atomic<unsigned> said{0};
  unsigned bit = 1u << unsigned(kind);
  if (kind != Notice::misc && (said.fetch_or(bit) & bit)) return;
  char line[512];
  int n = snprintf(line, sizeof line, "ddpscope: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
  va_end(ap);
  if (n > int(sizeof line) - 2) n = sizeof line - 2;
  line[n++] = '\n';
  // One write(2): the line cannot interleave with the job's own stderr output.
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;
}

}  // namespace ddpscope::inject
