#include "tests/reports/fixtures.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "profiler/store/merge.h"
#include "profiler/store/writer.h"

namespace ddpscope::testing {

using namespace ddpscope::analysis;

const char* const kAwkwardReason = "buckets of 25 MB, \"too small\"\r\nfor 2 nodes,\nsee docs";

namespace {

constexpr int64_t kWall = 1'700'000'000'000'000'000;  // rank 0's clock offset
constexpr uint64_t kNcclComm = 0x7123456789abcdefull;
constexpr uint64_t kGlooComm = 0x1234;

CollectiveRecord allreduce(int rank, uint64_t seq, uint64_t stream, int64_t t, Timing timing) {
  CollectiveRecord c;
  c.rank = rank;
  c.comm_id = kNcclComm;
  c.comm_rank = rank;
  c.nranks = 2;
  c.seq = seq;
  c.dtype = Dtype::float32;
  c.redop = RedOp::sum;
  c.count = 1024 * (seq + 1);
  c.bytes = 4 * c.count;
  c.stream = stream;
  c.tid = 42;
  c.host_start_ns = t;
  c.host_end_ns = t + 3'000;
  c.start_ns = timing == Timing::host ? t : t + 5'000;
  c.end_ns = timing == Timing::host ? t + 3'000 : t + 105'500;
  c.timing = timing;
  return c;
}

CommRecord comm(int rank, uint64_t id, Backend backend) {
  CommRecord c;
  c.rank = rank;
  c.comm_id = id;
  c.nranks = 2;
  c.comm_rank = rank;
  c.backend = backend;
  c.origin = CommOrigin::init_rank;
  c.created_ns = 1;
  return c;
}

// Kernels, ranges and syncs have no writer yet (the capture of a later
// release fills them), so they go in as the schema says, by hand.
void add_device_rows(const std::string& path) {
  store::Connection db(path, store::Connection::Mode::read_write);
  db.exec(
      "INSERT INTO kernels VALUES"
      " (0, 0, 16, 'sgemm_128x64', 2000, 52000, 1, NULL, 'kernel'),"
      " (0, 0, 16, 'ncclDevKernel_AllReduce_Sum_f32', 6000, 104000, 2, 1, 'kernel'),"
      " (0, 0, 32, 'Memcpy HtoD', 150000, 151000, 3, NULL, 'memcpy'),"
      " (0, 0, 32, 'Memset', 152000, 152500, 4, NULL, 'memset');"
      "INSERT INTO ranges VALUES"
      " (0, 42, 'pytorch', 'forward', 1500, 90000),"
      " (0, 42, '', 'step \"1\"', 1000, 400000);"
      "INSERT INTO syncs VALUES (0, 42, 'cudaStreamSynchronize', 16, 300000, 310000);");
}

std::string write_rank(const std::string& dir, int rank, int extra) {
  std::string path = dir + "/rank-" + std::to_string(rank) + ".db";
  {
    store::RankWriter w(
        path, {{"kind", "rank"}, {"timeline", "monotonic"}, {"command_line", "python train.py"}});
    w.begin();
    w.add(comm(rank, kNcclComm, Backend::nccl));
    if (rank == 0) {
      w.add(comm(0, kGlooComm, Backend::gloo));
      w.add(allreduce(0, 0, 0x10, 10'000, Timing::event));
      w.add(allreduce(0, 1, 0x10, 200'000, Timing::event));
      w.add(allreduce(0, 2, 0x20, 300'000, Timing::event));
      CollectiveRecord g = allreduce(0, 7, 0, 500'000, Timing::host);
      g.comm_id = kGlooComm;
      g.tid = 77;
      g.dtype = Dtype::bits32;
      w.add(g);
    } else {
      for (int i = 0; i < 2 + extra; ++i)
        w.add(allreduce(1, i, 0x30, 20'000 + i * 10'000, Timing::host));
    }
    ProcessRecord p;
    p.rank = rank;
    p.world_size = 2;
    p.host = "node" + std::to_string(rank);
    p.backend = Backend::nccl;
    p.clock_offset_ns = kWall + rank * 1'000'000;  // rank 1 starts 1 ms later
    w.put(p);
    w.commit();
    w.close();
  }
  if (rank == 0) add_device_rows(path);
  return path;
}

}  // namespace

SampleRun make_run_db(const std::string& dir, int extra) {
  SampleRun run;
  run.path = dir + "/run.db";
  store::merge_rank_files({write_rank(dir, 0, extra), write_rank(dir, 1, extra)}, run.path);
  run.origin_ns = kWall + 1000;  // the NVTX range "step" of rank 0
  run.collectives = 4 + 2 + extra;
  return run;
}

RunAnalysis sample_analysis() {
  RunAnalysis a;
  a.path = "/runs/job 1/run.db";
  a.command = "python train.py --tag \"a,b\"";
  a.world_size = 2;
  a.ranks_recorded = 2;
  a.backend = "nccl";
  a.timing = "event";
  a.compute_source = "kernels";
  a.iterations = {10, 2, 101.5, 120.25, 103.0, 40.5, 12.75, 38.0};
  a.iteration_list = {{0, 0, true, 1000, 2000, 0.001, 0.0005, 0.0004, 0.0001, 3},
                      {1, 3, false, 1'700'000'000'123'456'789, 1'700'000'000'223'456'789, 100.0,
                       40.0, 38.0, 12.5, 4}};
  a.buckets = {{0, 26214400, 16, 2500.5, 3100.0, 10.48576, 10.48576, 80.0, 500.0, 120.0, 0, ""},
               {1, 1048576, 16, 0, 0, NAN, INFINITY, 0, 0, 0, 0, ""}};
  a.collectives = {{Op::allreduce, 26214400, 2, 16, 2500.5, 3100.0, 10.48576, 10.48576}};
  OpSummary op;
  op.op = Op::allreduce;
  op.ranks = 2;
  op.calls = 32;
  op.bytes = 436207616;
  op.total_ms = 41.5;
  op.median_us = 1234.5;
  op.p95_us = 3000.0;
  op.algbw_gbps = 10.5;
  op.busbw_gbps = 10.5;
  op.timing = Timing::event;
  a.ops = {op};
  a.ranks = {{0, "node0", 0, 0, 0, 0, 25.0, 0, 100.0, 40.0, 16, 0},
             {1, "node,1", 1.5, 2.5, 3.75, 4.25, 75.0, -12.5, 101.0, 41.0, 16, 7}};
  a.ranks[1].kernel_overlap_pct = 62.5;  // rank 0 keeps NaN: no device communication
  a.recommendations = {{"bucket_cap_mb", "100", kAwkwardReason}, {"rank 1", "", "late"}};
  a.timeline = {{0, 3, "comm", "bucket 0", 1.5, 2.75}};
  a.lateness = {{0.0, 0.5}, {1.25, NAN}};
  DdpInstanceSummary d;
  d.buckets_from = "ddp";
  d.module = "Net";
  d.bucket_cap_bytes = 26214400;
  d.first_bucket_bytes = 1048576;
  d.comm_hook = "fp16_compress_hook";
  d.bucket_bytes = {26214400, 1048576};
  d.parameters = 4;
  d.parameter_bytes = 27262976;
  a.ddp = {d};
  a.roles = {{CollectiveRole::ddp_bucket, 32, 436207616, 41.5},
             {CollectiveRole::user, 10, 40, 0.25}};
  return a;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"')
        field += c;
      else if (i + 1 < text.size() && text[i + 1] == '"')
        field += text[++i];
      else
        quoted = false;
    } else if (c == '"') {
      if (!field.empty() || was_quoted) throw std::runtime_error("quote inside a field");
      quoted = was_quoted = true;
    } else if (c == ',' || c == '\r') {
      if (c == '\r' && (i + 1 >= text.size() || text[++i] != '\n'))
        throw std::runtime_error("CR without LF");
      row.push_back(field);
      field.clear();
      was_quoted = false;
      if (c == '\r') rows.push_back(std::move(row)), row.clear();
    } else if (c == '\n') {
      throw std::runtime_error("bare LF outside quotes");
    } else {
      if (was_quoted) throw std::runtime_error("text after a closing quote");
      field += c;
    }
  }
  if (quoted || !row.empty() || !field.empty()) throw std::runtime_error("unterminated record");
  return rows;
}

}  // namespace ddpscope::testing
