// Read access to the protected fields of Gloo's *Options classes (the message
// size, element size, root, tag and context we record). A class derived from
// each options class may name the protected members, and a pointer to member
// formed there is applied to the base object: well-defined C++, no layout
// guessing. Compiled against Debian's libgloo-dev headers; a Gloo built from
// other sources (PyPI's torch has its own inside libtorch_cpu.so) is checked
// to have the same layout before these reads are trusted (gloo_layout.h).
#pragma once

#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/scatter.h>

#include <atomic>
#include <cstring>
#include <numeric>

namespace ddpscope::inject::gloo_access {

// gloo::Context's rank and size lie where that Gloo's Context puts them:
// after a vtable pointer in Debian's Gloo (a polymorphic Context), at offset 0
// in the Gloo inside PyPI's torch (a plain Context, whose polymorphic
// rendezvous::Context puts its own vtable pointer just before it). Set once
// by gloo_layout before any read is trusted.
inline std::atomic<int> g_context_rank_offset{-1};

struct ContextRanks {
  int rank = -1, size = 0;
};
inline ContextRanks ranks_of(const gloo::Context* ctx) {
  ContextRanks r;
  int offset = g_context_rank_offset.load(std::memory_order_relaxed);
  if (!ctx || offset < 0) return r;
  const char* at = reinterpret_cast<const char*>(ctx) + offset;
  std::memcpy(&r.rank, at, sizeof(int));
  std::memcpy(&r.size, at + sizeof(int), sizeof(int));
  return r;
}

// What a hook records about one Gloo call.
struct GlooCall {
  const gloo::Context* context = nullptr;
  size_t elements = 0;  // elements per the op's count convention
  size_t element_size = 0;
  uint64_t bytes = 0;  // nccl-tests' S
  int root = -1;
  uint32_t tag = 0;
};

inline size_t buffer_size(const std::unique_ptr<gloo::transport::UnboundBuffer>& b) {
  return b ? b->size : 0;
}

struct Allreduce : gloo::AllreduceOptions {
  static GlooCall read(const gloo::AllreduceOptions& o) {
    const auto& impl = o.*(&Allreduce::impl_);
    uint64_t bytes = uint64_t(impl.elements) * impl.elementSize;
    return {impl.context.get(), impl.elements, impl.elementSize, bytes, -1, impl.tag};
  }
};

struct Broadcast : gloo::BroadcastOptions {
  static GlooCall read(const gloo::BroadcastOptions& o) {
    size_t n = o.*(&Broadcast::elements), es = o.*(&Broadcast::elementSize);
    return {(o.*(&Broadcast::context)).get(),
            n,
            es,
            uint64_t(n) * es,
            o.*(&Broadcast::root),
            o.*(&Broadcast::tag)};
  }
};

struct Reduce : gloo::ReduceOptions {
  static GlooCall read(const gloo::ReduceOptions& o) {
    size_t n = o.*(&Reduce::elements), es = o.*(&Reduce::elementSize);
    return {(o.*(&Reduce::context)).get(),
            n,
            es,
            uint64_t(n) * es,
            o.*(&Reduce::root),
            o.*(&Reduce::tag)};
  }
};

// Gathers: S is the whole gathered output, as nccl-tests counts it.
struct Allgather : gloo::AllgatherOptions {
  static GlooCall read(const gloo::AllgatherOptions& o) {
    size_t es = o.*(&Allgather::elementSize);
    uint64_t bytes = buffer_size(o.*(&Allgather::out));
    size_t per_rank = es ? buffer_size(o.*(&Allgather::in)) / es : 0;
    return {(o.*(&Allgather::context)).get(), per_rank, es, bytes, -1, o.*(&Allgather::tag)};
  }
};

struct Allgatherv : gloo::AllgathervOptions {
  static GlooCall read(const gloo::AllgathervOptions& o) {
    size_t es = o.*(&Allgatherv::elementSize);
    const auto& counts = o.*(&Allgatherv::elements);
    size_t total = std::accumulate(counts.begin(), counts.end(), size_t(0));
    return {(o.*(&Allgatherv::context)).get(),
            total,
            es,
            uint64_t(total) * es,
            -1,
            o.*(&Allgatherv::tag)};
  }
};

struct Alltoall : gloo::AlltoallOptions {
  static GlooCall read(const gloo::AlltoallOptions& o) {
    size_t es = o.*(&Alltoall::elementSize);
    uint64_t bytes = buffer_size(o.*(&Alltoall::in));
    return {(o.*(&Alltoall::context)).get(),
            es ? size_t(bytes / es) : 0,
            es,
            bytes,
            -1,
            o.*(&Alltoall::tag)};
  }
};

struct Alltoallv : gloo::AlltoallvOptions {
  static GlooCall read(const gloo::AlltoallvOptions& o) {
    size_t es = o.*(&Alltoallv::elementSize);
    const auto& lengths = o.*(&Alltoallv::inLengthPerRank);  // bytes per peer
    uint64_t bytes = std::accumulate(lengths.begin(), lengths.end(), uint64_t(0));
    return {(o.*(&Alltoallv::context)).get(),
            es ? size_t(bytes / es) : 0,
            es,
            bytes,
            -1,
            o.*(&Alltoallv::tag)};
  }
};

struct Gather : gloo::GatherOptions {
  static GlooCall read(const gloo::GatherOptions& o) {
    size_t es = o.*(&Gather::elementSize);
    const gloo::Context* ctx = (o.*(&Gather::context)).get();
    uint64_t per_rank = buffer_size(o.*(&Gather::in));
    uint64_t bytes = per_rank * uint64_t(ctx ? ranks_of(ctx).size : 1);
    return {ctx, es ? size_t(per_rank / es) : 0, es, bytes, o.*(&Gather::root), o.*(&Gather::tag)};
  }
};

struct Scatter : gloo::ScatterOptions {
  static GlooCall read(const gloo::ScatterOptions& o) {
    size_t es = o.*(&Scatter::elementSize);
    const gloo::Context* ctx = (o.*(&Scatter::context)).get();
    uint64_t per_rank = buffer_size(o.*(&Scatter::out));
    uint64_t bytes = per_rank * uint64_t(ctx ? ranks_of(ctx).size : 1);
    return {
        ctx, es ? size_t(per_rank / es) : 0, es, bytes, o.*(&Scatter::root), o.*(&Scatter::tag)};
  }
};

struct Barrier : gloo::BarrierOptions {
  static GlooCall read(const gloo::BarrierOptions& o) {
    return {(o.*(&Barrier::context)).get(), 0, 0, 0, -1, o.*(&Barrier::tag)};
  }
};

}  // namespace ddpscope::inject::gloo_access
