// The rule families behind recommend() (recommend.h), one file each, and the
// small helpers they share. Internal to profiler/analysis/: each rule reads a
// finished RunAnalysis and appends advice whose reason quotes the numbers it
// fired on, so the user can find them in the report.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "profiler/analysis/run_analysis.h"

namespace ddpscope::analysis::rules {

// snprintf into a string: the reasons are built from figures, not user text.
template <class... Args>
std::string fmt(const char* format, Args... args) {
  char buf[768];
  snprintf(buf, sizeof buf, format, args...);
  return buf;
}

inline double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// Whether DDP itself gave this instance's configuration (the start-up hook).
inline bool config_known(const DdpInstanceSummary& d) { return d.buckets_from == "ddp"; }

// The instance's configuration when DDP itself gave it (the start-up hook);
// null when the buckets were inferred from the pattern, so nothing about the
// cap or the flags is known and no rule may assume DDP's defaults.
const DdpInstanceSummary* known_config(const RunAnalysis& run, int instance);

// "" for a run with one DDP instance, else "DDP instance 1 (Discriminator): ",
// so advice for a GAN's two models says which one it means.
std::string instance_prefix(const RunAnalysis& run, int instance);

// bucket_cap_mb: larger, smaller, or "no smaller cap helps" (recommend_buckets.cpp).
void bucket_rules(const RunAnalysis& run, std::vector<Recommendation>& out);
// static_graph where DDP's own flags say it helps (recommend_graph.cpp).
void static_graph_rules(const RunAnalysis& run, std::vector<Recommendation>& out);
// A rank the others wait for a material share of the step (recommend_stragglers.cpp).
void straggler_rules(const RunAnalysis& run, std::vector<Recommendation>& out);
// NCCL switched algorithm or protocol at a size where bandwidth then fell
// (recommend_nccl.cpp; needs NCCL's profiler plugin). True if it advised.
bool nccl_choice_rules(const RunAnalysis& run, std::vector<Recommendation>& out);
// FSDP: exposed all-gathers, too fine a wrapping, reductions after backward
// (recommend_fsdp.cpp).
void fsdp_rules(const RunAnalysis& run, std::vector<Recommendation>& out);

}  // namespace ddpscope::analysis::rules
