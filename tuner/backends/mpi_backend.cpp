// The MPI backend (Open MPI): MPI_Iallreduce in place on a duplicate of
// MPI_COMM_WORLD, MPI_Wait to finish it. Rank and size are MPI's own: run one
// process per rank under mpirun or srun.
//
// Non-blocking MPI makes most of its progress inside MPI_Wait/MPI_Test unless
// the library runs an asynchronous progress thread, so a bucket started during
// backward mostly moves once wait() is called. The algorithm is Open MPI's
// choice: MCA parameters select it (docs/tuner.md, "Replay and backends").

// The C API only: Open MPI's mpi.h otherwise pulls in the deprecated C++
// bindings, which live in a library MPI::MPI_C does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/core/clock.h"
#include "tuner/backend.h"

namespace ddpscope::tuner {
namespace {

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, size_t(len));
}

void check(int code, const char* what) {
  if (code != MPI_SUCCESS) throw std::runtime_error(std::string(what) + ": " + mpi_error(code));
}

// Who calls MPI_Finalize: the last backend alive, and only if a backend called
// MPI_Init (a caller that initialised MPI itself also finalises it).
int g_live_backends = 0;
bool g_we_initialised = false;

struct HostBuffer {
  std::vector<float> data;
  MPI_Request request = MPI_REQUEST_NULL;
  int64_t start_ns = 0;
};

class MpiBackend final : public Backend {
 public:
  MpiBackend() {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    // Errors come back as codes (turned into exceptions) instead of aborting the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    ++g_live_backends;
  }

  ~MpiBackend() override {
    for (auto& b : buffers_)
      if (b.request != MPI_REQUEST_NULL) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm_);
    if (--g_live_backends == 0 && g_we_initialised) MPI_Finalize();
  }

  std::string name() const override { return "mpi"; }

  void release_buffers() override {
    for (auto& b : buffers_)
      if (b.request != MPI_REQUEST_NULL) MPI_Wait(&b.request, MPI_STATUS_IGNORE);
    buffers_.clear();
  }

  int add_buffer(uint64_t bytes) override {
    const uint64_t elements = std::max<uint64_t>(1, (bytes + 3) / 4);
    if (elements > uint64_t(INT_MAX))
      throw std::runtime_error("a bucket of " + std::to_string(bytes) +
                               " bytes exceeds MPI's int element count");
    buffers_.emplace_back();
    buffers_.back().data.assign(elements, 0.0f);
    return int(buffers_.size() - 1);
  }

  void start_allreduce(int id) override {
    HostBuffer& b = buffer(id);
    b.start_ns = clock::monotonic_ns();
    check(MPI_Iallreduce(MPI_IN_PLACE, b.data.data(), int(b.data.size()), MPI_FLOAT, MPI_SUM, comm_,
                         &b.request),
          "MPI_Iallreduce");
  }

  void wait(int id, int64_t* start_ns, int64_t* end_ns) override {
    HostBuffer& b = buffer(id);
    check(MPI_Wait(&b.request, MPI_STATUS_IGNORE), "MPI_Wait");
    *start_ns = b.start_ns;
    *end_ns = clock::monotonic_ns();
  }

  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

  float* data(int id) { return buffer(id).data.data(); }

 private:
  HostBuffer& buffer(int id) {
    if (id < 0 || size_t(id) >= buffers_.size())
      throw std::out_of_range("mpi backend: no buffer " + std::to_string(id));
    return buffers_[size_t(id)];
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<HostBuffer> buffers_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(std::string* error) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (finalised) {
    *error = "MPI was already finalised in this process (open the MPI backend once)";
    return nullptr;
  }
  if (!initialised) {
    // Only the calling thread makes MPI calls.
    int provided = 0;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
      *error = "MPI_Init_thread failed: " + mpi_error(rc);
      return nullptr;
    }
    g_we_initialised = true;
  }
  try {
    return std::make_unique<MpiBackend>();
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

// Test hook (declared in tests/replay/backend_hooks.h): the host memory of
// buffer `id`, or nullptr when `b` is not an MPI backend.
float* mpi_buffer_for_testing(Backend& b, int id) {
  auto* mpi = dynamic_cast<MpiBackend*>(&b);
  return mpi ? mpi->data(id) : nullptr;
}

}  // namespace ddpscope::tuner
