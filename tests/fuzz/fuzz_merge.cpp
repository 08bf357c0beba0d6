// `ddpscope merge` (and record's own merge) over damaged rank files: the
// input is two rank files, the first's length in its first four bytes
// (little-endian); the merged run, if any, is then read and analysed.
#include <cstring>

#include "profiler/analysis/analyze.h"
#include "profiler/store/merge.h"
#include "profiler/store/reader.h"
#include "tests/fuzz/fuzz_support.h"

using namespace ddpscope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t first = 0;
  memcpy(&first, data, 4);
  data += 4, size -= 4;
  if (first > size) first = uint32_t(size);
  fuzz::ScratchFile rank0("rank-0.db", data, first);
  fuzz::ScratchFile rank1("rank-1.db", data + first, size - first);
  const std::string out = fuzz::ScratchFile::sibling("merged.db");
  fuzz::refusing_bad_input([&] {
    store::merge_rank_files({rank0.path(), rank1.path()}, out);
    store::RunReader reader(out);
    analysis::analyze_run(reader);
  });
  fuzz::ScratchFile::remove_with_side_files(out);
  return 0;
}
