// The per-op layout checks of gloo_layout.h: each examines, with fault-free
// reads, every field gloo_access.h reads for that op, and one relation between
// independent fields (a buffer's byte size against the element count and
// size). Classes derived from each options class may name its protected
// members, as in gloo_access.h.
#include "injector/gloo/gloo_layout.h"

namespace ddpscope::inject::gloo_layout {
namespace {

struct AllreduceView : gloo::AllreduceOptions {
  static void check(Probe& p, const gloo::AllreduceOptions& o) {
    const auto& impl = o.*(&AllreduceView::impl_);
    p.context(&impl.context);
    size_t es = 0, inputs = 0;
    if (!p.element_size(&impl.elementSize, &es)) return;
    uint64_t n = p.word(&impl.elements);
    p.require(n < (uint64_t(1) << 40), "the element count is out of range");
    uint64_t bytes = p.first_buffer(&impl.in, &inputs);
    if (p.ok() && inputs > 0) p.require(bytes == n * es, "the input buffer's size disagrees");
  }
};

// Broadcast and reduce: in and/or out buffers of `elements` elements.
template <typename Options>
struct RootedView : Options {
  static void check(Probe& p, const Options& o) {
    p.context(&(o.*(&RootedView::context)));
    size_t es = 0;
    int root = 0;
    if (!p.element_size(&(o.*(&RootedView::elementSize)), &es) ||
        !p.root(&(o.*(&RootedView::root)), &root))
      return;
    uint64_t n = p.word(&(o.*(&RootedView::elements)));
    uint64_t in = p.buffer(&(o.*(&RootedView::in))), out = p.buffer(&(o.*(&RootedView::out)));
    if (p.ok() && in) p.require(in == n * es, "the input buffer's size disagrees");
    if (p.ok() && out) p.require(out == n * es, "the output buffer's size disagrees");
  }
};
using BroadcastView = RootedView<gloo::BroadcastOptions>;
using ReduceView = RootedView<gloo::ReduceOptions>;

struct AllgatherView : gloo::AllgatherOptions {
  static void check(Probe& p, const gloo::AllgatherOptions& o) {
    p.context(&(o.*(&AllgatherView::context)));
    size_t es = 0;
    if (!p.element_size(&(o.*(&AllgatherView::elementSize)), &es)) return;
    uint64_t in = p.buffer(&(o.*(&AllgatherView::in)));
    uint64_t out = p.buffer(&(o.*(&AllgatherView::out)));
    if (p.ok()) p.require(out % es == 0, "the output buffer is not whole elements");
    if (p.ok() && in) p.require(out == in * uint64_t(p.size()), "in x ranks != out");
  }
};

struct AllgathervView : gloo::AllgathervOptions {
  static void check(Probe& p, const gloo::AllgathervOptions& o) {
    p.context(&(o.*(&AllgathervView::context)));
    size_t es = 0;
    if (!p.element_size(&(o.*(&AllgathervView::elementSize)), &es)) return;
    size_t counts = p.vector_size(&(o.*(&AllgathervView::elements)));
    if (p.ok()) p.require(counts == size_t(p.size()), "one count per rank expected");
  }
};

struct AlltoallView : gloo::AlltoallOptions {
  static void check(Probe& p, const gloo::AlltoallOptions& o) {
    p.context(&(o.*(&AlltoallView::context)));
    size_t es = 0;
    if (!p.element_size(&(o.*(&AlltoallView::elementSize)), &es)) return;
    uint64_t in = p.buffer(&(o.*(&AlltoallView::in)));
    uint64_t out = p.buffer(&(o.*(&AlltoallView::out)));
    if (p.ok()) p.require(in == out && in % es == 0, "in and out buffers disagree");
  }
};

struct AlltoallvView : gloo::AlltoallvOptions {
  static void check(Probe& p, const gloo::AlltoallvOptions& o) {
    p.context(&(o.*(&AlltoallvView::context)));
    size_t es = 0;
    if (!p.element_size(&(o.*(&AlltoallvView::elementSize)), &es)) return;
    size_t lengths = p.vector_size(&(o.*(&AlltoallvView::inLengthPerRank)));
    if (p.ok()) p.require(lengths == size_t(p.size()), "one length per rank expected");
  }
};

// Gather and scatter: a root, and the one rank-sized buffer the hook reads
// (gather's input, scatter's output) holds whole elements.
template <typename Options, bool kReadsInput>
struct OneToAllView : Options {
  static void check(Probe& p, const Options& o) {
    p.context(&(o.*(&OneToAllView::context)));
    size_t es = 0;
    int root = 0;
    if (!p.element_size(&(o.*(&OneToAllView::elementSize)), &es) ||
        !p.root(&(o.*(&OneToAllView::root)), &root))
      return;
    uint64_t bytes = 0;
    if constexpr (kReadsInput)
      bytes = p.buffer(&(o.*(&OneToAllView::in)));
    else
      bytes = p.buffer(&(o.*(&OneToAllView::out)));
    if (p.ok()) p.require(bytes % es == 0, "a buffer is not whole elements");
  }
};
using GatherView = OneToAllView<gloo::GatherOptions, true>;
using ScatterView = OneToAllView<gloo::ScatterOptions, false>;

struct BarrierView : gloo::BarrierOptions {
  static void check(Probe& p, const gloo::BarrierOptions& o) {
    p.context(&(o.*(&BarrierView::context)));
  }
};

}  // namespace

void check(Probe& p, const gloo::AllreduceOptions& o) { AllreduceView::check(p, o); }
void check(Probe& p, const gloo::BroadcastOptions& o) { BroadcastView::check(p, o); }
void check(Probe& p, const gloo::ReduceOptions& o) { ReduceView::check(p, o); }
void check(Probe& p, const gloo::AllgatherOptions& o) { AllgatherView::check(p, o); }
void check(Probe& p, const gloo::AllgathervOptions& o) { AllgathervView::check(p, o); }
void check(Probe& p, const gloo::AlltoallOptions& o) { AlltoallView::check(p, o); }
void check(Probe& p, const gloo::AlltoallvOptions& o) { AlltoallvView::check(p, o); }
void check(Probe& p, const gloo::GatherOptions& o) { GatherView::check(p, o); }
void check(Probe& p, const gloo::ScatterOptions& o) { ScatterView::check(p, o); }
void check(Probe& p, const gloo::BarrierOptions& o) { BarrierView::check(p, o); }

}  // namespace ddpscope::inject::gloo_layout
