// The injector's voice on stderr: one line, prefixed "ddpscope:", and each kind
// of notice at most once per process so a job's own output is never flooded.
#pragma once

namespace ddpscope::inject {

enum class Notice {
  no_output,
  write_failed,
  no_real_symbol,
  no_thread_buffer,
  cuda_timer,
  cupti,
  unknown_dtype,
  names_full,
  graph_capture,
  cupti_buffers,
  misc
};

// printf-style; prints only the first time `kind` is raised (misc: always).
void notice_once(Notice kind, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace ddpscope::inject
