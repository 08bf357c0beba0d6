// The NCCL backend: one GPU per rank (rank % device count), buffers in device
// memory, each all-reduce on one dedicated stream between two CUDA events, as
// DDP's reducer issues them on NCCL's stream. Ranks meet through a file in the
// shared rendezvous directory that carries NCCL's unique id.
//
// Status: compiled wherever CUDA and NCCL are found; not yet run on a GPU (the
// machines it was written on have none). Without a device the factory fails
// with "no CUDA device: ...".
#include <cuda_runtime.h>
#include <nccl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "profiler/core/atomic_file.h"
#include "profiler/core/clock.h"
#include "tuner/backend.h"

namespace ddpscope::tuner {
namespace {

constexpr std::chrono::seconds kRendezvousTimeout{60};

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    throw std::runtime_error(std::string("nccl: ") + what + ": " + ncclGetErrorString(r));
}

std::string id_path(const RankInfo& info) {
  return info.rendezvous_dir + "/nccl-unique-id-" + info.run_id;
}

// Rank 0 makes the id and publishes it atomically (write, then rename); the
// others poll for the file.
ncclUniqueId exchange_unique_id(const RankInfo& info) {
  ncclUniqueId id{};
  const std::string path = id_path(info);
  if (info.rank == 0) {
    nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    core::write_atomically(
        path, [&](std::ostream& out) { out.write(reinterpret_cast<const char*>(&id), sizeof id); });
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + kRendezvousTimeout;
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in && in.read(reinterpret_cast<char*>(&id), sizeof id)) return id;
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("no NCCL id from rank 0 in " + path + " after 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

struct Buffer {
  float* device = nullptr;
  size_t elements = 0;
  cudaEvent_t start = nullptr, end = nullptr;
};

class NcclBackend final : public Backend {
 public:
  NcclBackend(const RankInfo& info, int device) : device_(device) {
    cuda_check(cudaSetDevice(device_), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (auto& probe : probes_) cuda_check(cudaEventCreate(&probe), "cudaEventCreate");
    const ncclUniqueId id = exchange_unique_id(info);
    nccl_check(ncclCommInitRank(&comm_, info.world_size, id, info.rank), "ncclCommInitRank");
    // Init returns only after every rank joined with the id, so the file has
    // served its purpose; removing it keeps a later run from reading a stale id.
    if (info.rank == 0) std::filesystem::remove(id_path(info));
    set_anchor();
  }

  ~NcclBackend() override {
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    if (comm_) ncclCommDestroy(comm_);
    for (auto& b : buffers_) {
      cudaFree(b.device);
      cudaEventDestroy(b.start);
      cudaEventDestroy(b.end);
    }
    for (auto probe : probes_) cudaEventDestroy(probe);
    cudaFree(barrier_buffer_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return "nccl"; }

  void release_buffers() override {
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    for (auto& b : buffers_) {
      cudaFree(b.device);
      cudaEventDestroy(b.start);
      cudaEventDestroy(b.end);
    }
    buffers_.clear();
  }

  int add_buffer(uint64_t bytes) override {
    use_device();
    Buffer b;
    b.elements = std::max<uint64_t>(1, (bytes + 3) / 4);
    cuda_check(cudaMalloc(&b.device, b.elements * sizeof(float)), "cudaMalloc");
    cuda_check(cudaMemset(b.device, 0, b.elements * sizeof(float)), "cudaMemset");
    cuda_check(cudaEventCreate(&b.start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&b.end), "cudaEventCreate");
    buffers_.push_back(b);
    return int(buffers_.size() - 1);
  }

  void start_allreduce(int id) override {
    Buffer& b = buffer(id);
    use_device();
    cuda_check(cudaEventRecord(b.start, stream_), "cudaEventRecord");
    nccl_check(ncclAllReduce(b.device, b.device, b.elements, ncclFloat, ncclSum, comm_, stream_),
               "ncclAllReduce");
    cuda_check(cudaEventRecord(b.end, stream_), "cudaEventRecord");
  }

  void wait(int id, int64_t* start_ns, int64_t* end_ns) override {
    Buffer& b = buffer(id);
    cuda_check(cudaEventSynchronize(b.end), "cudaEventSynchronize");
    *start_ns = host_time_of(b.start);
    *end_ns = host_time_of(b.end);
  }

  // A one-element all-reduce is NCCL's barrier. The stream is idle after it,
  // which is when the clock anchor can be refreshed.
  void barrier() override {
    use_device();
    if (!barrier_buffer_) cuda_check(cudaMalloc(&barrier_buffer_, sizeof(float)), "cudaMalloc");
    nccl_check(
        ncclAllReduce(barrier_buffer_, barrier_buffer_, 1, ncclFloat, ncclSum, comm_, stream_),
        "ncclAllReduce (barrier)");
    cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    set_anchor();
  }

 private:
  // The current device is per thread: a caller on another thread than the
  // constructor's would otherwise allocate and launch on device 0.
  void use_device() { cuda_check(cudaSetDevice(device_), "cudaSetDevice"); }

  Buffer& buffer(int id) {
    if (id < 0 || size_t(id) >= buffers_.size())
      throw std::out_of_range("nccl backend: no buffer " + std::to_string(id));
    return buffers_[size_t(id)];
  }

  // Event times are GPU times; to put them on CLOCK_MONOTONIC, record an
  // event on the idle stream between two host readings and take the midpoint,
  // keeping the tightest of a few tries (the anchor). Re-anchoring at each
  // barrier bounds clock drift and the float precision of
  // cudaEventElapsedTime (milliseconds as a float) to one replay's length.
  void set_anchor() {
    int64_t best_width = INT64_MAX;
    for (cudaEvent_t probe : probes_) {
      const int64_t before = clock::monotonic_ns();
      cuda_check(cudaEventRecord(probe, stream_), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(probe), "cudaEventSynchronize");
      const int64_t width = clock::monotonic_ns() - before;
      if (width < best_width) {
        best_width = width;
        anchor_ = probe;
        anchor_host_ns_ = before + width / 2;
      }
    }
  }

  int64_t host_time_of(cudaEvent_t e) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, anchor_, e), "cudaEventElapsedTime");
    return anchor_host_ns_ + std::llround(double(ms) * 1e6);
  }

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  std::array<cudaEvent_t, 5> probes_{};
  cudaEvent_t anchor_ = nullptr;  // one of probes_
  int64_t anchor_host_ns_ = 0;
  ncclComm_t comm_ = nullptr;
  float* barrier_buffer_ = nullptr;
  std::vector<Buffer> buffers_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const RankInfo& info, std::string* error) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    *error = std::string("no CUDA device: ") +
             cudaGetErrorString(e != cudaSuccess ? e : cudaErrorNoDevice);
    return nullptr;
  }
  try {
    return std::make_unique<NcclBackend>(info, info.rank % count);
  } catch (const std::exception& ex) {
    *error = "nccl: rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) +
             ": " + ex.what();
    return nullptr;
  }
}

}  // namespace ddpscope::tuner
