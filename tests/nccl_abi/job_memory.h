// The job's buffers, as the double's data movement touches them. In the
// sanitizer legs that code is built without the sanitizers' checks
// (CMakeLists.txt), but under TSan its memcpy calls would still be checked,
// every byte: 60 MB a step in tests/nccl_plugin's ddp_like_job, fifty times
// the injector's own work there (one recorded run: 15 s against 0.3 s
// unsanitized). Those bytes belong to the job and the double, never to
// ddpscope, whose code is what the leg checks; so TSan ignores them while the
// data moves. The double's own state (the matching queues, their mutexes and
// condition variables) stays checked. Elsewhere this is nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
#endif

namespace ddpscope::testnccl {

// Held while the double moves the job's data.
class JobMemoryScope {
 public:
  JobMemoryScope() {
#if defined(__SANITIZE_THREAD__)
    AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
#endif
  }
  ~JobMemoryScope() {
#if defined(__SANITIZE_THREAD__)
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
  }
  JobMemoryScope(const JobMemoryScope&) = delete;
  JobMemoryScope& operator=(const JobMemoryScope&) = delete;
};

}  // namespace ddpscope::testnccl
