// A communication backend the replay engine drives, behind one small interface
// (the nccl-tests way): start an all-reduce of a bucket asynchronously, wait
// for it, and say how long it ran. Each implementation is one file under
// tuner/backends/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace ddpscope::tuner {

// Who this process is and how ranks find each other.
struct RankInfo {
  int rank = 0;
  int world_size = 1;
  std::string rendezvous_dir;  // gloo: a directory shared by all ranks (file store)
  std::string run_id;          // distinguishes runs sharing a rendezvous directory
  // gloo: the address to bind and advertise (e.g. the emulated node's); empty:
  // DDPSCOPE_TUNE_IFACE_ADDR, else DDPSCOPE_TUNE_IFACE, else 127.0.0.1.
  std::string bind_address;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Buffers for a bucket of `bytes` (float32 elements) the backend reduces in place.
  virtual int add_buffer(uint64_t bytes) = 0;
  // Starts a sum all-reduce of buffer `id`; returns immediately.
  virtual void start_allreduce(int id) = 0;
  // Blocks until the all-reduce of `id` completed; returns its start and end
  // (CLOCK_MONOTONIC ns) as the backend saw them.
  virtual void wait(int id, int64_t* start_ns, int64_t* end_ns) = 0;
  virtual void barrier() = 0;
  // Frees every buffer (all of them waited for): a sweep replays many settings
  // on one backend, and each setting's buffers hold a whole model's gradients.
  virtual void release_buffers() {}
};

// Factories (nullptr with `error` set when the backend is not built or cannot start;
// the caller names the backend, so `error` does not).
std::unique_ptr<Backend> make_gloo_backend(const RankInfo& info, std::string* error);
std::unique_ptr<Backend> make_mpi_backend(std::string* error);  // rank/size from MPI_Init
std::unique_ptr<Backend> make_nccl_backend(const RankInfo& info, std::string* error);

}  // namespace ddpscope::tuner
