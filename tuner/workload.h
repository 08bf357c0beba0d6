// A training job's gradient workload, as the tuner replays it: the model's
// parameters (in model.parameters() order) with their sizes, dtypes and the
// backward compute that produces each gradient, the forward and optimizer
// time, and the order in which gradients become ready.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/core/input_error.h"
#include "profiler/core/vocab.h"

namespace ddpscope::tuner {

struct Param {
  std::string name;
  uint64_t numel = 0;
  Dtype dtype = Dtype::float32;
  double backward_us = 0;  // compute that makes this gradient ready
  uint64_t bytes() const { return numel * dtype_bytes(dtype); }
};

// How DDP itself lays out buckets for a workload recorded from a real DDP
// instance (workload_from_run with DDP's own account), so that re-bucketing
// at another cap gives what DDP builds when the job passes bucket_cap_mb at
// that cap. Presets and JSON files have none: they plan as asked.
struct DdpBucketing {
  std::string torch_version;
  // torch 2.x: an explicitly given bucket_cap_mb caps the first bucket too
  // (_BucketCapacityConfig); torch 1.13: the first bucket is always
  // dist._DEFAULT_FIRST_BUCKET_BYTES, the sweep's first_bucket_mb.
  bool first_bucket_follows_cap = false;
  // false: DDP keeps its constructor's layout (find_unused_parameters without
  // static_graph never rebuilds): filled in parameter order, then reversed.
  bool rebuilds = true;
};

struct Workload {
  std::string name;
  std::vector<Param> params;  // model.parameters() order
  double forward_us = 0;
  double optimizer_us = 0;
  std::vector<size_t> ready_order;  // indices into params; default: reverse order
  std::optional<DdpBucketing> ddp;  // set only from DDP's own account of a recorded run
  // Where the layout came from, for the user: "" for presets and files; a
  // recording says whether DDP's own account or the all-reduce pattern.
  std::string source;
  uint64_t total_bytes() const;
  double backward_us() const;
};

// The JSON format of issue #5 / docs/tuner.md. A malformed workload throws
// InputError: one line naming the file and the problem.
Workload load_workload_json(const std::string& path);
// The same from the file's text (`path` names it in messages).
Workload workload_from_json_text(const std::string& path, const std::string& text);

// "resnet50", "bert-large", "gpt2-medium": shapes from the published
// architectures, compute from a FLOP estimate (docs/tuner.md). Throws
// InputError for an unknown name.
Workload preset_workload(const std::string& name);
std::vector<std::string> preset_names();

// Checks invariants (non-empty, known dtypes, ready_order a permutation);
// throws InputError prefixed with `where`.
void validate(const Workload& w, const std::string& where);

}  // namespace ddpscope::tuner
