// Is the Gloo in this process laid out as the headers we were compiled
// against? gloo_access.h reads protected fields of Gloo's *Options classes at
// the offsets of Debian's libgloo-dev headers; PyPI's torch compiles its own
// Gloo into libtorch_cpu.so, and a different Gloo could put them elsewhere.
// Before trusting the reads, the first call of each op is examined with reads
// that cannot fault (safe_read.h): the context must be a Gloo object (its
// vtable's symbol names a gloo:: class) with 0 <= rank < size, element sizes
// must be 1..16 bytes, roots in range, and the transport buffers must be
// UnboundBuffers whose sizes agree with the element counts. Two independent
// fields that agree cannot both be garbage by chance. Any failure stops Gloo
// recording for the process; the calls still go to the real Gloo.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "injector/gloo/gloo_access.h"

namespace ddpscope::inject::gloo_layout {

// Fault-free reads of fields at our compiled offsets, and the checks on them.
class Probe {
 public:
  // The context a shared_ptr field holds: a gloo:: object, rank in [0, size).
  const gloo::Context* context(const std::shared_ptr<gloo::Context>* field);
  // The byte size of the UnboundBuffer a unique_ptr field holds; 0 if null.
  uint64_t buffer(const std::unique_ptr<gloo::transport::UnboundBuffer>* field);
  // The first buffer of a vector of them (0 if empty), and how many there are.
  uint64_t first_buffer(const std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>>* field,
                        size_t* count);
  // How many elements a vector<size_t> field holds.
  size_t vector_size(const std::vector<size_t>* field);
  uint64_t word(const void* field);
  bool element_size(const size_t* field, size_t* out);
  bool root(const int* field, int* out);

  void fail(const char* what) {
    if (ok_) failed_ = what;
    ok_ = false;
  }
  void require(bool cond, const char* what) {
    if (!cond) fail(what);
  }
  bool ok() const { return ok_; }
  const char* failed() const { return failed_; }
  int size() const { return size_; }

 private:
  bool ok_ = true;
  const char* failed_ = "";
  int size_ = 0;  // the context's, once read
};

// One function per options class: every field gloo_access reads, checked.
void check(Probe& p, const gloo::AllreduceOptions& o);
void check(Probe& p, const gloo::BroadcastOptions& o);
void check(Probe& p, const gloo::ReduceOptions& o);
void check(Probe& p, const gloo::AllgatherOptions& o);
void check(Probe& p, const gloo::AllgathervOptions& o);
void check(Probe& p, const gloo::AlltoallOptions& o);
void check(Probe& p, const gloo::AlltoallvOptions& o);
void check(Probe& p, const gloo::GatherOptions& o);
void check(Probe& p, const gloo::ScatterOptions& o);
void check(Probe& p, const gloo::BarrierOptions& o);

// Whether this op's reads can be trusted: examined on its first call (per
// process). Once any op fails, Gloo recording is off for good, with one notice
// naming the object that defines the real function and the failed check.
constexpr int kOps = 10;
extern std::atomic<bool> g_off;
extern std::atomic<bool> g_verified[kOps];
bool settle(int op_index, const Probe& p, const void* real);
template <typename Options>
bool trusted(int op_index, const Options& opts, const void* real) {
  if (g_off.load(std::memory_order_relaxed)) return false;
  if (__builtin_expect(g_verified[op_index].load(std::memory_order_acquire), 1)) return true;
  Probe p;
  check(p, opts);
  return settle(op_index, p, real);
}

}  // namespace ddpscope::inject::gloo_layout
