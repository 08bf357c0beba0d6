// The NCCL backend: one GPU per rank (rank % device count), buffers in device
// memory, each all-reduce on one dedicated stream between two CUDA events, as
// DDP's reducer issues them on NCCL's stream. Ranks meet through a file in the
// shared rendezvous directory that carries NCCL's unique id.
//
// NCCL and the CUDA driver are loaded at run time (nccl_runtime.h): the driver
// API, not CUDA's runtime library, so only NCCL has to be found. Without them
// the factory says which is missing ("no NCCL: ...", "no CUDA driver: ...",
// "no CUDA device: ...").
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
#include <system_error>
#include <thread>
#include <vector>

#include "profiler/core/atomic_file.h"
#include "profiler/core/clock.h"
#include "tuner/backend.h"
#include "tuner/backends/nccl_runtime.h"

namespace ddpscope::tuner {
namespace {

constexpr std::chrono::seconds kRendezvousTimeout{60};

class Checker {
 public:
  explicit Checker(const NcclRuntime& rt) : rt_(rt) {}
  void operator()(CUresult r, const char* what) const {
    if (r != CUDA_SUCCESS) throw std::runtime_error(driver_error(rt_, r, what));
  }
  void operator()(ncclResult_t r, const char* what) const {
    if (r != ncclSuccess)
      throw std::runtime_error(std::string(what) + ": " + rt_.ncclGetErrorString(r));
  }

 private:
  const NcclRuntime& rt_;
};

std::string id_path(const RankInfo& info) {
  return info.rendezvous_dir + "/nccl-unique-id-" + info.run_id;
}

// Rank 0 makes the id and publishes it atomically (write, then rename); the
// others poll for the file.
ncclUniqueId exchange_unique_id(const NcclRuntime& rt, const RankInfo& info) {
  ncclUniqueId id{};
  const std::string path = id_path(info);
  if (info.rank == 0) {
    const Checker check(rt);
    check(rt.ncclGetUniqueId(&id), "ncclGetUniqueId");
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

struct DeviceBuffer {
  CUdeviceptr device = 0;
  size_t elements = 0;
  CUevent start = nullptr, end = nullptr;
};

class NcclBackend final : public Backend {
 public:
  NcclBackend(const NcclRuntime& rt, const RankInfo& info, CUdevice device)
      : rt_(rt), check_(rt), device_(device) {
    try {
      start(info);
    } catch (...) {
      // A constructor that throws gets no destructor: a start NCCL refused
      // (two ranks on one GPU, say) must still give back what it took.
      teardown();
      std::error_code ignored;
      if (info.rank == 0) std::filesystem::remove(id_path(info), ignored);
      throw;
    }
  }

  ~NcclBackend() override { teardown(); }

  std::string name() const override { return "nccl"; }

  void release_buffers() override {
    rt_.cuCtxSetCurrent(context_);
    if (stream_) rt_.cuStreamSynchronize(stream_);
    for (auto& b : buffers_) {
      rt_.cuMemFree(b.device);
      rt_.cuEventDestroy(b.start);
      rt_.cuEventDestroy(b.end);
    }
    buffers_.clear();
  }

  int add_buffer(uint64_t bytes) override {
    use_device();
    DeviceBuffer b;
    b.elements = std::max<uint64_t>(1, (bytes + 3) / 4);
    check_(rt_.cuMemAlloc(&b.device, b.elements * sizeof(float)), "cuMemAlloc");
    check_(rt_.cuMemsetD8(b.device, 0, b.elements * sizeof(float)), "cuMemsetD8");
    check_(rt_.cuEventCreate(&b.start, CU_EVENT_DEFAULT), "cuEventCreate");
    check_(rt_.cuEventCreate(&b.end, CU_EVENT_DEFAULT), "cuEventCreate");
    buffers_.push_back(b);
    return int(buffers_.size() - 1);
  }

  void start_allreduce(int id) override {
    DeviceBuffer& b = buffer(id);
    use_device();
    check_(rt_.cuEventRecord(b.start, stream_), "cuEventRecord");
    check_(allreduce(b.device, b.elements), "ncclAllReduce");
    check_(rt_.cuEventRecord(b.end, stream_), "cuEventRecord");
  }

  void wait(int id, int64_t* start_ns, int64_t* end_ns) override {
    DeviceBuffer& b = buffer(id);
    check_(rt_.cuEventSynchronize(b.end), "cuEventSynchronize");
    *start_ns = host_time_of(b.start);
    *end_ns = host_time_of(b.end);
  }

  // A one-element all-reduce is NCCL's barrier. The stream is idle after it,
  // which is when the clock anchor can be refreshed.
  void barrier() override {
    use_device();
    if (!barrier_buffer_) check_(rt_.cuMemAlloc(&barrier_buffer_, sizeof(float)), "cuMemAlloc");
    check_(allreduce(barrier_buffer_, 1), "ncclAllReduce (barrier)");
    check_(rt_.cuStreamSynchronize(stream_), "cuStreamSynchronize");
    set_anchor();
  }

 private:
  void start(const RankInfo& info) {
    check_(rt_.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
    use_device();
    check_(rt_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    for (auto& probe : probes_)
      check_(rt_.cuEventCreate(&probe, CU_EVENT_DEFAULT), "cuEventCreate");
    const ncclUniqueId id = exchange_unique_id(rt_, info);
    ncclComm_t comm = nullptr;  // kept only once NCCL says it is whole
    check_(rt_.ncclCommInitRank(&comm, info.world_size, id, info.rank), "ncclCommInitRank");
    comm_ = comm;
    // Init returns only after every rank joined with the id, so the file has
    // served its purpose; removing it keeps a later run from reading a stale id.
    if (info.rank == 0) std::filesystem::remove(id_path(info));
    set_anchor();
  }

  void teardown() {
    if (!context_) return;  // nothing was taken
    rt_.cuCtxSetCurrent(context_);
    release_buffers();
    if (comm_) rt_.ncclCommDestroy(comm_);
    for (auto probe : probes_)
      if (probe) rt_.cuEventDestroy(probe);
    if (barrier_buffer_) rt_.cuMemFree(barrier_buffer_);
    if (stream_) rt_.cuStreamDestroy(stream_);
    rt_.cuDevicePrimaryCtxRelease(device_);
  }

  // In place, float sum, on our stream (a CUstream is a cudaStream_t).
  ncclResult_t allreduce(CUdeviceptr data, size_t elements) {
    void* p = reinterpret_cast<void*>(data);
    return rt_.ncclAllReduce(p, p, elements, ncclFloat, ncclSum, comm_, stream_);
  }

  // The current context is per thread: a caller on another thread than the
  // constructor's would otherwise have none, or another device's.
  void use_device() { check_(rt_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

  DeviceBuffer& buffer(int id) {
    if (id < 0 || size_t(id) >= buffers_.size())
      throw std::out_of_range("nccl backend: no buffer " + std::to_string(id));
    return buffers_[size_t(id)];
  }

  // Event times are GPU times; to put them on CLOCK_MONOTONIC, record an
  // event on the idle stream between two host readings and take the midpoint,
  // keeping the tightest of a few tries (the anchor). Re-anchoring at each
  // barrier bounds clock drift and the float precision of
  // cuEventElapsedTime (milliseconds as a float) to one replay's length.
  void set_anchor() {
    int64_t best_width = INT64_MAX;
    for (CUevent probe : probes_) {
      const int64_t before = clock::monotonic_ns();
      check_(rt_.cuEventRecord(probe, stream_), "cuEventRecord");
      check_(rt_.cuEventSynchronize(probe), "cuEventSynchronize");
      const int64_t width = clock::monotonic_ns() - before;
      if (width < best_width) {
        best_width = width;
        anchor_ = probe;
        anchor_host_ns_ = before + width / 2;
      }
    }
  }

  int64_t host_time_of(CUevent e) {
    float ms = 0;
    check_(rt_.cuEventElapsedTime(&ms, anchor_, e), "cuEventElapsedTime");
    return anchor_host_ns_ + std::llround(double(ms) * 1e6);
  }

  const NcclRuntime& rt_;
  Checker check_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::array<CUevent, 5> probes_{};
  CUevent anchor_ = nullptr;  // one of probes_
  int64_t anchor_host_ns_ = 0;
  ncclComm_t comm_ = nullptr;
  CUdeviceptr barrier_buffer_ = 0;
  std::vector<DeviceBuffer> buffers_;
};

// The device of this rank: rank % device count.
CUdevice device_of(const NcclRuntime& rt, const RankInfo& info, std::string* error) {
  int count = 0;
  CUresult r = rt.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    *error = "no CUDA device: " +
             (r != CUDA_SUCCESS ? driver_error(rt, r, "cuDeviceGetCount") : "none visible");
    return -1;
  }
  CUdevice device = -1;
  if ((r = rt.cuDeviceGet(&device, info.rank % count)) != CUDA_SUCCESS) {
    *error = "no CUDA device: " + driver_error(rt, r, "cuDeviceGet");
    return -1;
  }
  return device;
}

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const RankInfo& info, std::string* error) {
  const NcclRuntime* rt = load_nccl_runtime(error);
  if (!rt) return nullptr;
  const CUdevice device = device_of(*rt, info, error);
  if (device < 0) return nullptr;
  try {
    return std::make_unique<NcclBackend>(*rt, info, device);
  } catch (const std::exception& ex) {
    *error = "rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) + ": " +
             ex.what();
    return nullptr;
  }
}

}  // namespace ddpscope::tuner
