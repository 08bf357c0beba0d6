// ddpscope's NCCL profiler plugin, loaded the way NCCL loads it
// (plugin_driver.cpp): every collective's algorithm, protocol and channels,
// and every proxy op and step, must land in its own row with the right
// communicator and sequence number, whichever version NCCL picks and whether
// or not the hooks are preloaded too; under v6, a copy-engine collective and
// its synchronisations and copy batch too.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <tuple>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

namespace {

constexpr int64_t kCommHash = int64_t(0xabcdef0123456789ull);
constexpr int kSteps = 3;

struct Want {
  const char *algo, *proto;
  int nchannels, nwarps;
  int64_t count;
};
const std::map<int64_t, Want> kWant = {{7, {"RING", "LL", 2, 8, 1024}},
                                       {8, {"TREE", "LL128", 4, 16, 1 << 20}},
                                       {9, {"RING", "SIMPLE", 8, 32, 25 << 20}}};

// The activation masks: collectives, proxy ops, proxy steps, kernel channels;
// v6 adds the copy-engine collective, sync and batch events.
constexpr int kMaskV5 = (1 << 1) | (1 << 3) | (1 << 4) | (1 << 6);
constexpr int kMaskV6 = kMaskV5 | (1 << 12) | (1 << 13) | (1 << 14);

std::string record(const char* version, bool preload) {
  auto dir = testing::temp_dir(std::string("nccl_plugin_") + version + (preload ? "_pre" : ""));
  std::map<std::string, std::string> env = {
      {"DDPSCOPE_OUT", dir}, {"DDPSCOPE_RANK", "1"}, {"DDPSCOPE_FLUSH_MS", "50"}};
  if (preload) env["LD_PRELOAD"] = INJECT_LIB;
  auto r = testing::run({PLUGIN_DRIVER_EXE, INJECT_LIB, version}, env);
  INFO(r.err);
  REQUIRE(r.status == 0);
  int mask = std::string(version) == "v6" ? kMaskV6 : kMaskV5;
  CHECK(r.out == "mask " + std::to_string(mask) + "\n");
  return dir + "/rank-1.db";
}

// The kernel collectives (a v6 run adds a copy-engine one, checked apart).
std::vector<NcclPluginCollectiveRecord> kernel_collectives(store::RunReader& db) {
  std::vector<NcclPluginCollectiveRecord> out;
  for (auto& c : db.rows<NcclPluginCollectiveRecord>())
    if (c.algo != "CE") out.push_back(std::move(c));
  return out;
}

void check_collectives(store::RunReader& db) {
  auto colls = kernel_collectives(db);
  REQUIRE(colls.size() == 3);
  for (const auto& c : colls) {
    INFO("seq " << c.seq);
    REQUIRE(kWant.count(c.seq));
    const Want& w = kWant.at(c.seq);
    CHECK(c.rank == 1);
    CHECK(c.comm_hash == kCommHash);
    CHECK(c.func == "AllReduce");
    CHECK(c.algo == w.algo);
    CHECK(c.proto == w.proto);
    CHECK(c.nchannels == w.nchannels);
    CHECK(c.nwarps == w.nwarps);
    CHECK(c.count == w.count);
    CHECK(c.dtype == "ncclFloat32");
    CHECK(c.start_ns < c.end_ns);
  }
}

// seq -> the plugin's coll_key for that collective
std::map<int64_t, int64_t> coll_keys(store::RunReader& db) {
  std::map<int64_t, int64_t> keys;
  std::set<int64_t> distinct;
  for (const auto& c : kernel_collectives(db)) {
    CHECK(c.coll_key > 0);
    CHECK(c.comm_rank == 1);
    keys[c.seq] = c.coll_key;
    distinct.insert(c.coll_key);
  }
  CHECK(distinct.size() == keys.size());
  return keys;
}

void check_kernel_channels(store::RunReader& db) {
  auto keys = coll_keys(db);
  std::map<int64_t, std::set<int>> channels;  // coll_key -> channels seen
  for (const auto& k : db.rows<NcclKernelChannelRecord>()) {
    CHECK(k.comm_hash == kCommHash);
    CHECK(channels[k.coll_key].insert(k.channel).second);
    CHECK(k.gpu_stop - k.gpu_start == 500);
    CHECK(k.start_ns <= k.end_ns);
  }
  for (const auto& [seq, w] : kWant) CHECK(int(channels[keys[seq]].size()) == w.nchannels);
}

void check_proxy_ops(store::RunReader& db) {
  auto keys = coll_keys(db);
  std::map<int64_t, std::set<int>> channels;  // seq -> channels seen
  int foreign = 0;
  for (const auto& o : db.rows<NcclProxyOpRecord>()) {
    CHECK(o.comm_hash == kCommHash);
    if (o.seq == -1) {  // another process's op: its parent was not ours
      ++foreign;
      CHECK(o.coll_key == 0);
      continue;
    }
    INFO("seq " << o.seq << " channel " << o.channel);
    CHECK(o.coll_key == keys[o.seq]);
    CHECK(channels[o.seq].insert(o.channel).second);
    CHECK(o.is_send == (o.channel % 2 == 0));
    CHECK(o.peer == (o.is_send ? 2 : 0));
    CHECK(o.nsteps == kSteps);
    CHECK(o.chunk_bytes == 4096 * (o.channel + 1));
    CHECK((o.start_ns <= o.progress_ns && o.progress_ns <= o.end_ns));
  }
  CHECK(foreign == 1);
  for (const auto& [seq, w] : kWant) CHECK(int(channels[seq].size()) == w.nchannels);
}

void check_proxy_steps(store::RunReader& db) {
  std::map<std::tuple<int64_t, int, int>, int> seen;  // (seq, channel, step)
  for (const auto& s : db.rows<NcclProxyStepRecord>()) {
    INFO("seq " << s.seq << " channel " << s.channel << " step " << s.step);
    CHECK(s.comm_hash == kCommHash);
    ++seen[{s.seq, s.channel, s.step}];
    CHECK(s.is_send == (s.channel % 2 == 0));
    CHECK(s.bytes == 1000 * (s.channel + 1) + s.step);
    if (s.is_send) {
      CHECK((s.start_ns <= s.gpu_wait_ns && s.gpu_wait_ns <= s.peer_wait_ns &&
             s.peer_wait_ns <= s.net_wait_ns && s.net_wait_ns <= s.end_ns));
      CHECK(s.flush_wait_ns == kNoTime);
    } else {
      CHECK((s.start_ns <= s.net_wait_ns && s.net_wait_ns <= s.flush_wait_ns &&
             s.flush_wait_ns <= s.gpu_wait_ns && s.gpu_wait_ns <= s.end_ns));
      CHECK(s.peer_wait_ns == kNoTime);
    }
  }
  size_t want = 0;
  for (const auto& [seq, w] : kWant) {
    want += size_t(w.nchannels * kSteps);
    for (int ch = 0; ch < w.nchannels; ++ch)
      for (int st = 0; st < kSteps; ++st) CHECK(seen[{seq, ch, st}] == 1);
  }
  CHECK(seen.size() == want);
}

void check_run(const std::string& path) {
  store::RunReader db(path);
  auto comms = db.rows<NcclPluginCommRecord>();
  REQUIRE(comms.size() == 1);
  CHECK(comms[0].comm_hash == kCommHash);
  CHECK(comms[0].name == "ddp-pg0");
  CHECK((comms[0].nranks == 4 && comms[0].comm_rank == 1 && comms[0].nnodes == 1));
  check_collectives(db);
  check_proxy_ops(db);
  check_proxy_steps(db);
  check_kernel_channels(db);
}

// plugin_driver.cpp's copy-engine all-gather: one collective row (algorithm
// CE, NCCL's sync strategy, no channels) and its steps keyed to it, inside its
// span; the step whose parent was not ours keeps only its communicator.
void check_copy_engine(store::RunReader& db) {
  std::vector<NcclPluginCollectiveRecord> ce;
  for (const auto& c : db.rows<NcclPluginCollectiveRecord>())
    if (c.algo == "CE") ce.push_back(c);
  REQUIRE(ce.size() == 1);
  const auto& c = ce[0];
  CHECK((c.func == "AllGather" && c.proto == "MC" && c.dtype == "ncclBfloat16"));
  CHECK((c.seq == 42 && c.count == 3 << 20 && c.nchannels == 0 && c.comm_rank == 1));
  CHECK(c.comm_hash == kCommHash);
  CHECK(c.start_ns <= c.end_ns);
  for (const auto& [seq, key] : coll_keys(db)) CHECK(key != c.coll_key);

  std::vector<std::string> kinds;
  int foreign = 0;
  for (const auto& o : db.rows<NcclCeOpRecord>()) {
    CHECK(o.comm_hash == kCommHash);
    if (o.coll_key == 0) {
      ++foreign;
      continue;
    }
    CHECK(o.coll_key == c.coll_key);
    CHECK((c.start_ns <= o.start_ns && o.start_ns <= o.end_ns && o.end_ns <= c.end_ns));
    kinds.push_back(o.kind);
    if (o.kind == "sync") CHECK(o.nranks == 4);
    if (o.kind == "batch")
      CHECK((o.num_ops == 3 && o.bytes == int64_t(3 << 20) * 2 * 3 && o.intra_sync));
  }
  CHECK(foreign == 1);
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"batch", "sync", "sync"});
}

}  // namespace

TEST_CASE("NCCL profiler plugin v6 (NCCL 2.29+): copy-engine collectives and all of v5's") {
  store::RunReader db(record("v6", false));
  check_run(db.path());
  check_copy_engine(db);
}

TEST_CASE("NCCL profiler plugin v5: no copy-engine rows") {
  store::RunReader db(record("v5", false));
  CHECK(db.rows<NcclCeOpRecord>().empty());
  CHECK(kernel_collectives(db).size() == db.rows<NcclPluginCollectiveRecord>().size());
}

TEST_CASE("NCCL profiler plugin v5, loaded by dlopen alone (static NCCL, no hooks)") {
  check_run(record("v5", false));
}

TEST_CASE("NCCL profiler plugin v5, with the hooks preloaded") { check_run(record("v5", true)); }

TEST_CASE("NCCL profiler plugin v4 (NCCL 2.27)") { check_run(record("v4", false)); }

TEST_CASE("a flood of NCCL proxy steps never crowds out the collectives after it") {
  auto dir = testing::temp_dir("nccl_plugin_flood");
  std::map<std::string, std::string> env = {
      {"DDPSCOPE_OUT", dir},
      {"DDPSCOPE_RANK", "1"},
      {"DDPSCOPE_BUFFER_EVENTS", "64"},  // the smallest ring
      {"DDPSCOPE_FLUSH_MS", "60000"}};   // no drain before exit
  auto r = testing::run({PLUGIN_DRIVER_EXE, INJECT_LIB, "v5", "flood", "1000"}, env);
  INFO(r.err);
  REQUIRE(r.status == 0);
  store::RunReader db(dir + "/rank-1.db");
  // 64 slots, 16 of them kept for communication: the communicator's event
  // and 47 steps take the other 48; the three collectives come after.
  CHECK(db.count("nccl_plugin_comms") == 1);
  CHECK(db.count("nccl_proxy_steps") == 47);
  CHECK(db.count("nccl_plugin_collectives") == 3);
  CHECK(db.processes().at(0).dropped_events == 1000 - 47);
}
