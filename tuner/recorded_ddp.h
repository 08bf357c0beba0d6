// DDP's own account of one of its instances, as `ddpscope record`'s Python
// start-up hook wrote it into the run's ddp_info table (docs/schema.md): what
// the tuner needs to lay buckets out as that DDP does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/store/reader.h"

namespace ddpscope::tuner {

struct RecordedDdp {
  int rank = 0;
  int instance = 0;
  std::string torch_version;
  uint64_t bucket_cap_bytes = 0;
  uint64_t first_bucket_bytes = 0;  // the first bucket's limit on rebuild
  bool explicit_cap_sets_first_bucket = false;
  bool find_unused_parameters = false, static_graph = false;
  // The reducer's parameters in its index order (module order).
  std::vector<uint64_t> param_bytes;
  std::vector<std::string> param_dtypes;  // torch's names without "torch."
  std::vector<uint64_t> bucket_sizes;     // the constructor's layout, reduction order
  // Parameter indices per bucket once DDP rebuilt; empty while it had not.
  std::vector<std::vector<size_t>> rebuilt_buckets;
  std::vector<uint64_t> rebuilt_bucket_sizes;

  uint64_t parameter_bytes() const;
  // DDP's reducer rebuilds from the gradient-ready order unless it looks for
  // unused parameters on a graph that is not static.
  bool rebuilds() const { return static_graph || !find_unused_parameters; }
};

// The lowest recorded rank's account of the instance with the most parameter
// bytes (the first on a tie); a later row of a key supersedes an earlier one.
// nullopt where the run holds no usable account (a v1 file, a job the hook
// did not see, an instance whose parameters were never written): *why says
// why. Throws InputError ("<path>: ...") for a value that does not parse.
std::optional<RecordedDdp> recorded_ddp(store::RunReader& reader, const std::string& path,
                                        std::string* why);

}  // namespace ddpscope::tuner
