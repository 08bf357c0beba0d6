// plan_buckets_tool WORKLOAD.json BUCKET_MB FIRST_BUCKET_MB [constructor]:
// prints the bucket plan as {"buckets": [[param indices...], ...]} in DDP's
// reduction order, for test_bucketizer_vs_torch.py to compare with torch's own
// assignment. `constructor` plans as a DDP that never rebuilds (a workload
// recorded with find_unused_parameters): its constructor's layout.
#include <cstdio>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tuner/bucket_plan.h"

int main(int argc, char** argv) {
  const bool constructor = argc == 5 && std::string(argv[4]) == "constructor";
  if (argc != 4 && !constructor) {
    std::fprintf(stderr, "usage: %s WORKLOAD.json BUCKET_MB FIRST_BUCKET_MB [constructor]\n",
                 argv[0]);
    return 2;
  }
  try {
    using namespace ddpscope::tuner;
    Workload w = load_workload_json(argv[1]);
    if (constructor) w.ddp = DdpBucketing{"", false, false};
    // std::stod reads the decimal the test wrote exactly as Python's float() does.
    const BucketPlan plan = plan_buckets(w, std::stod(argv[2]), std::stod(argv[3]));
    nlohmann::json buckets = nlohmann::json::array();
    for (const Bucket& b : plan.buckets) buckets.push_back(b.params);
    std::cout << nlohmann::json{{"buckets", buckets}}.dump() << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plan_buckets_tool: %s\n", e.what());
    return 1;
  }
  return 0;
}
