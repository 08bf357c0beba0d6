// One collective, one row (profiler/store/nccl_join.h), on a DDP-like job
// recorded by `ddpscope record` over the NCCL test double, which loads the
// profiler plugin the way NCCL does: with the hooks, every collective the
// plugin saw is joined to the hooks' row for it, none twice, a group's
// collectives too although NCCL launches them in its own order; with NCCL
// linked statically, the plugin alone gives the same rows. With the double's
// all-gathers on the copy engines (profiler v6's ceColl), those too are
// joined, and timed by their CE events where nothing else timed them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "profiler/store/reader.h"
#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

namespace {

// 4 ranks × (broadcast + 3 steps × 7 + split all-reduce) + the one-rank all-reduce.
constexpr size_t kMultiRank = 4 * (1 + 3 * 7 + 1), kAll = kMultiRank + 1;

// The double runs all-gathers on the copy engines (tests/nccl_abi/profiler_host.h).
const std::map<std::string, std::string> kCopyEngine = {{"DDPSCOPE_QUIET", "1"},
                                                        {"DDPSCOPE_TESTNCCL_CE_ALLGATHER", "1"}};

std::string record(const char* exe, const std::string& name, bool plugin,
                   const std::map<std::string, std::string>& env = {{"DDPSCOPE_QUIET", "1"}}) {
  auto dir = testing::temp_dir(name);
  std::vector<std::string> argv = {DDPSCOPE_BIN, "record", "-o", dir + "/rec"};
  if (!plugin) argv.push_back("--no-nccl-plugin");
  argv.insert(argv.end(), {"--", exe});
  auto r = testing::run(argv, env);
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "ddp_like_job: done\n");
  return dir + "/rec/run.db";
}

// The double's stand-in for NCCL's tuner (tests/nccl_abi/profiler_host.cpp).
std::pair<std::string, std::string> choice(uint64_t bytes) {
  if (bytes <= (64u << 10)) return {"TREE", "LL"};
  if (bytes <= (4u << 20)) return {"RING", "LL128"};
  return {"RING", "SIMPLE"};
}

uint64_t buffer_bytes(const CollectiveRecord& c) { return c.count * dtype_bytes(c.dtype); }

using Row = std::tuple<int, std::string, uint64_t, std::string, std::string, std::string, int>;

// What a collective is and what NCCL chose for it, without ids or times.
std::vector<Row> joined_rows(store::RunReader& db) {
  std::map<int64_t, CollectiveRecord> by_id;
  for (const auto& c : db.rows<CollectiveRecord>()) by_id[c.id] = c;
  std::vector<Row> rows;
  for (const auto& p : db.rows<NcclPluginCollectiveRecord>()) {
    REQUIRE(by_id.count(p.collective_id));
    const CollectiveRecord& c = by_id[p.collective_id];
    rows.emplace_back(c.comm_rank, std::string(name_of(c.op)), c.count,
                      std::string(name_of(c.dtype)), p.algo, p.proto, p.nchannels);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

TEST_CASE("hooks and NCCL's plugin: one row per collective, NCCL's choice joined to it") {
  store::RunReader with(record(JOB_EXE, "join_with", true));
  store::RunReader without(record(JOB_EXE, "join_without", false));
  auto colls = with.rows<CollectiveRecord>();
  CHECK(colls.size() == kAll);
  CHECK(without.rows<CollectiveRecord>().size() == kAll);
  CHECK(without.rows<NcclPluginCollectiveRecord>().empty());

  std::map<int64_t, CollectiveRecord> by_id;
  for (const auto& c : colls) by_id[c.id] = c;
  auto plugin = with.rows<NcclPluginCollectiveRecord>();
  REQUIRE(plugin.size() == kMultiRank);  // the one-rank all-reduce never reaches the plugin
  std::set<int64_t> linked;
  for (const auto& p : plugin) {
    INFO("plugin " << p.func << " #" << p.seq << " count " << p.count);
    REQUIRE(by_id.count(p.collective_id));
    CHECK(linked.insert(p.collective_id).second);  // no collective joined twice
    const CollectiveRecord& c = by_id[p.collective_id];
    CHECK(c.nranks > 1);
    CHECK(c.count == uint64_t(p.count));  // a group's calls, too, found their own row
    CHECK(c.comm_rank == p.comm_rank);
    auto [algo, proto] = choice(buffer_bytes(c));
    CHECK(p.algo == algo);
    CHECK(p.proto == proto);
    CHECK(c.timing == Timing::kernel_channels);  // no CUDA here: the GPU timer is the best
    CHECK((c.start_ns <= c.end_ns && c.start_ns != kNoTime));
  }
  std::set<std::pair<uint64_t, int32_t>> hook_comms;
  for (const auto& c : with.rows<CommRecord>()) {
    CHECK(c.origin != CommOrigin::nccl_plugin);
    hook_comms.insert({c.comm_id, c.comm_rank});
  }
  for (const auto& pc : with.rows<NcclPluginCommRecord>())
    CHECK(hook_comms.count({pc.comm_id, pc.comm_rank}));
}

TEST_CASE("statically linked NCCL: NCCL's plugin alone gives the same rows") {
  store::RunReader hooked(record(JOB_EXE, "join_hooked", true));
  store::RunReader alone(record(STATIC_JOB_EXE, "join_static", true));
  auto colls = alone.rows<CollectiveRecord>();
  CHECK(colls.size() == kMultiRank);
  for (const auto& c : alone.rows<CommRecord>()) CHECK(c.origin == CommOrigin::nccl_plugin);
  CHECK(joined_rows(alone) == joined_rows(hooked));

  // Every rank of a communicator numbers its collectives alike, so the
  // analysis matches them across ranks as it does the hooks'.
  std::map<std::pair<uint64_t, uint64_t>, std::set<std::tuple<std::string, uint64_t>>> by_seq;
  for (const auto& c : colls) {
    by_seq[{c.comm_id, c.seq}].insert({std::string(name_of(c.op)), c.count});
    CHECK(c.timing == Timing::kernel_channels);
    CHECK((c.start_ns <= c.end_ns && c.host_start_ns <= c.host_end_ns));
    CHECK(c.bytes == c.count * dtype_bytes(c.dtype) * (c.op == Op::allgather ? 4 : 1));
  }
  for (const auto& [key, calls] : by_seq) CHECK(calls.size() == 1);
}

TEST_CASE("statically linked NCCL with --no-nccl-plugin: nothing to record") {
  CHECK_FALSE(std::filesystem::exists(record(STATIC_JOB_EXE, "join_static_off", false)));
}

TEST_CASE("report: NCCL's choice per bucket and per op and size, with kernel and network time") {
  auto db = record(JOB_EXE, "join_report", true);
  auto dir = std::filesystem::path(db).parent_path().string();
  auto r =
      testing::run({DDPSCOPE_BIN, "report", db, "--json", dir + "/r.json", "--csv", dir + "/csv"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("NCCL's choices (its profiler plugin):"));
  auto json = nlohmann::json::parse(std::ifstream(dir + "/r.json"));
  const auto& choices = json.at("nccl_choices");
  REQUIRE(choices.size() == 9);  // 7 all-reduce sizes (one on the split), broadcast, all-gather
  for (const auto& c : choices) {
    auto [algo, proto] =
        choice(c.at("bytes").get<uint64_t>() / (c.at("op") == "allgather" ? 4 : 1));
    CHECK(c.at("algo") == algo);
    CHECK(c.at("proto") == proto);
    CHECK(c.at("kernel_us").get<double>() >= 0);
    CHECK(c.at("network_us").get<double>() >= 0);  // the double's proxy steps post to the network
  }
  int with_choice = 0;
  for (const auto& b : json.at("buckets"))
    with_choice += !b.at("nccl_choice").get<std::string>().empty();
  CHECK(with_choice == int(json.at("buckets").size()));
  CHECK(std::filesystem::exists(dir + "/csv/nccl_choices.csv"));
}

TEST_CASE("record keeps a profiler plugin the user chose, and says what ddpscope then misses") {
  auto dir = testing::temp_dir("join_theirs");
  auto r = testing::run({DDPSCOPE_BIN, "record", "-o", dir + "/rec", "--", STATIC_JOB_EXE},
                        {{"NCCL_PROFILER_PLUGIN", "/nonexistent/libnccl-profiler-theirs.so"}});
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("ddpscope: keeping your NCCL_PROFILER_PLUGIN "
                                    "(/nonexistent/libnccl-profiler-theirs.so)"));
  CHECK_FALSE(std::filesystem::exists(dir + "/rec/run.db"));  // static NCCL: only a plugin sees
}

// 4 ranks × 3 steps, one all-gather each, on the copy engines.
constexpr size_t kCopyEngineGathers = 4 * 3;

TEST_CASE(
    "copy-engine all-gathers (profiler v6): joined to their calls, timed by their CE events") {
  store::RunReader db(record(JOB_EXE, "join_ce", true, kCopyEngine));
  std::map<int64_t, CollectiveRecord> by_id;
  for (const auto& c : db.rows<CollectiveRecord>()) by_id[c.id] = c;
  CHECK(by_id.size() == kAll);
  auto plugin = db.rows<NcclPluginCollectiveRecord>();
  REQUIRE(plugin.size() == kMultiRank);
  std::set<int64_t> linked, ce_keys;
  for (const auto& p : plugin) {
    INFO("plugin " << p.func << " " << p.algo << " count " << p.count);
    REQUIRE(by_id.count(p.collective_id));
    CHECK(linked.insert(p.collective_id).second);
    const CollectiveRecord& c = by_id[p.collective_id];
    CHECK(c.count == uint64_t(p.count));
    if (p.algo != "CE") {
      CHECK(c.op != Op::allgather);
      CHECK(c.timing == Timing::kernel_channels);
      continue;
    }
    ce_keys.insert(p.coll_key);
    CHECK(c.op == Op::allgather);
    CHECK(c.timing == Timing::ce_events);  // no kernel, no CUDA: the CE span is the best
    CHECK((c.start_ns == p.start_ns && c.end_ns == p.end_ns));
  }
  CHECK(ce_keys.size() == kCopyEngineGathers);
  auto steps = db.rows<NcclCeOpRecord>();
  CHECK(steps.size() == 3 * kCopyEngineGathers);  // ready sync, batch, completion sync
  for (const auto& o : steps) CHECK(ce_keys.count(o.coll_key));
}

TEST_CASE("statically linked NCCL with copy-engine all-gathers: the plugin alone gives the same") {
  store::RunReader hooked(record(JOB_EXE, "join_ce_hooked", true, kCopyEngine));
  store::RunReader alone(record(STATIC_JOB_EXE, "join_ce_static", true, kCopyEngine));
  CHECK(joined_rows(alone) == joined_rows(hooked));
  int gathers = 0;
  for (const auto& c : alone.rows<CollectiveRecord>()) {
    if (c.op != Op::allgather) continue;
    ++gathers;
    CHECK(c.timing == Timing::ce_events);
    CHECK((c.start_ns != kNoTime && c.start_ns <= c.end_ns));
  }
  CHECK(gathers == int(kCopyEngineGathers));
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `report` of `run` (a run.db or a directory of rank files) as JSON and as a
// Chrome trace, the run's name in them written as `as`.
std::string report_of(const std::string& run, const std::string& out, const std::string& as) {
  auto r = testing::run(
      {DDPSCOPE_BIN, "report", "-q", run, "--json", out + ".json", "--trace", out + ".trace.json"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::string text = slurp(out + ".json") + slurp(out + ".trace.json");
  for (size_t at = 0; (at = text.find(run, at)) != std::string::npos; at += as.size())
    text.replace(at, run.size(), as);
  return text;
}

}  // namespace

// The join of the merge, done on the rank files as they are read
// (profiler/store/placed_rank_file.h): hook rows joined, rows of the plugin
// alone (static NCCL), copy-engine collectives timed by their CE events.
TEST_CASE("report of the rank files read together: the report of their merge, plugin joined") {
  const std::pair<const char*, std::map<std::string, std::string>> jobs[] = {
      {JOB_EXE, {{"DDPSCOPE_QUIET", "1"}}},
      {STATIC_JOB_EXE, {{"DDPSCOPE_QUIET", "1"}}},
      {JOB_EXE, kCopyEngine}};
  int k = 0;
  for (const auto& [exe, env] : jobs) {
    auto db = record(exe, "join_unmerged" + std::to_string(k++), true, env);
    auto dir = std::filesystem::path(db).parent_path().string();
    INFO(db);
    auto merged = report_of(db, dir + "/merged", "RUN");
    CHECK_THAT(merged, Catch::Contains("\"algo\""));  // NCCL's choices joined
    CHECK(report_of(dir, dir + "/unmerged", "RUN") == merged);
  }
}
