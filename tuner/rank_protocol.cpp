#include "tuner/rank_protocol.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "profiler/core/atomic_file.h"
#include "profiler/core/rank_env.h"
#include "tuner/bucket_plan.h"
#include "tuner/replay.h"

namespace ddpscope::tuner {
namespace {

using nlohmann::json;

json samples_json(const std::vector<IterationSample>& s) {
  json a = json::array();
  for (const auto& x : s) a.push_back({x.iter_ms, x.comm_ms, x.exposed_ms});
  return a;
}

std::vector<IterationSample> samples_from(const json& a) {
  std::vector<IterationSample> out;
  for (const auto& x : a)
    out.push_back({x[0].get<double>(), x[1].get<double>(), x[2].get<double>()});
  return out;
}

std::string rank_file(const WorkerPlan& p, int rank) {
  return p.results_dir + "/" + p.backend + "-rank" + std::to_string(rank) + ".json";
}

void write_json_atomically(const std::string& path, const json& j) {
  core::write_atomically(path, [&](std::ostream& out) { out << j.dump(); });
}

std::unique_ptr<Backend> open_backend(const WorkerPlan& p, int* rank, int* size,
                                      std::string* error) {
  RankInfo info;
  info.rank = rank_env::rank_or(0);
  info.world_size = rank_env::world_size_or(1);
  info.rendezvous_dir = p.results_dir + "/rendezvous-" + p.backend;
  info.run_id = p.backend;
  std::filesystem::create_directories(info.rendezvous_dir);
  *rank = info.rank;
  *size = info.world_size;
  if (p.backend == "gloo") return make_gloo_backend(info, error);
  if (p.backend == "nccl") return make_nccl_backend(info, error);
  if (p.backend == "mpi") return make_mpi_backend(error);
  *error = "unknown backend '" + p.backend + "'";
  return nullptr;
}

// Rank 0 waits for every rank's file (they are written before the final
// barrier, so this only covers slow shared filesystems).
std::vector<SettingResult> combine(const WorkerPlan& p, int size) {
  std::vector<json> ranks;
  for (int r = 0; r < size; ++r) {
    for (int i = 0; i < 600 && !std::filesystem::exists(rank_file(p, r)); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks.push_back(json::parse(std::ifstream(rank_file(p, r))));
  }
  std::vector<SettingResult> out;
  for (size_t k = 0; k < ranks[0]["settings"].size(); ++k) {
    const auto& s0 = ranks[0]["settings"][k];
    std::vector<std::vector<IterationSample>> per_rank;
    for (const auto& r : ranks) per_rank.push_back(samples_from(r["settings"][k]["iterations"]));
    Setting setting{p.backend, s0["bucket_mb"].get<double>(), p.first_bucket_mb};
    out.push_back(summarize_setting(setting, s0["buckets"].get<int>(), per_rank));
  }
  return out;
}

void progress(int rank, size_t done, size_t total, const std::string& what) {
  if (rank != 0 || !isatty(STDERR_FILENO)) return;
  int width = 30, filled = int(width * done / std::max<size_t>(1, total));
  std::cerr << "\rtune [" << std::string(filled, '#') << std::string(width - filled, '.') << "] "
            << done << "/" << total << " " << what << "        " << std::flush;
  if (done == total) std::cerr << "\n";
}

}  // namespace

int run_rank(const WorkerPlan& p, std::vector<SettingResult>* summary, int* rank_out) {
  int rank = 0, size = 1;
  std::string error;
  auto backend = open_backend(p, &rank, &size, &error);
  if (!backend) {
    std::cerr << "ddpscope: tune: " << p.backend << ": " << error << "\n";
    return 1;
  }
  *rank_out = rank;
  json mine = {{"rank", rank}, {"settings", json::array()}};
  for (size_t k = 0; k < p.bucket_mb.size(); ++k) {
    progress(rank, k, p.bucket_mb.size(), p.backend + " " + std::to_string(p.bucket_mb[k]) + " MB");
    auto plan = plan_buckets(p.workload, p.bucket_mb[k], p.first_bucket_mb);
    std::vector<IterationSample> samples;
    try {
      samples = replay(p.workload, plan, *backend, p.replay);
    } catch (const std::exception& e) {
      std::cerr << "ddpscope: tune: " << p.backend << ": rank " << rank << ": " << e.what() << "\n";
      return 1;
    }
    backend->release_buffers();
    mine["settings"].push_back({{"bucket_mb", p.bucket_mb[k]},
                                {"buckets", plan.buckets.size()},
                                {"iterations", samples_json(samples)}});
  }
  progress(rank, p.bucket_mb.size(), p.bucket_mb.size(), p.backend);
  write_json_atomically(rank_file(p, rank), mine);
  backend->barrier();
  if (rank == 0) {
    *summary = combine(p, size);
    write_summary(p.results_dir + "/" + p.backend + "-summary.json", *summary);
  }
  return 0;
}

void write_summary(const std::string& path, const std::vector<SettingResult>& results) {
  json a = json::array();
  for (const auto& r : results)
    a.push_back({{"backend", r.setting.backend},
                 {"bucket_mb", r.setting.bucket_mb},
                 {"first_bucket_mb", r.setting.first_bucket_mb},
                 {"nranks", r.nranks},
                 {"buckets", r.buckets},
                 {"iterations", samples_json(r.iterations)}});
  write_json_atomically(path, a);
}

std::vector<SettingResult> read_summary(const std::string& path) {
  std::vector<SettingResult> out;
  for (const auto& s : json::parse(std::ifstream(path))) {
    Setting setting{s["backend"], s["bucket_mb"].get<double>(), s["first_bucket_mb"].get<double>()};
    // Iterations in the summary are already combined over the ranks (combine).
    std::vector<std::vector<IterationSample>> one{samples_from(s["iterations"])};
    auto r = summarize_setting(setting, s["buckets"].get<int>(), one);
    r.nranks = s["nranks"].get<int>();
    r.topology = "1x" + std::to_string(r.nranks);
    out.push_back(r);
  }
  return out;
}

}  // namespace ddpscope::tuner
