// The Gloo backend: Debian's libgloo (the library torch's ProcessGroupGloo is
// built on), TCP transport, rendezvous through a file store in a directory all
// ranks share. Each all-reduce runs on one worker thread fed by a queue, in
// launch order, as ProcessGroupGloo does with one thread: start_allreduce
// returns at once and the collective overlaps the caller's compute.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "profiler/core/clock.h"
#include "tuner/backend.h"

namespace ddpscope::tuner {
namespace {

constexpr std::chrono::seconds kTimeout{60};  // rendezvous and each collective
constexpr int kBarrier = -1;                  // queue entry for a barrier

// One bucket's buffer and the state of its latest all-reduce.
struct Slot {
  std::vector<float> data;
  uint64_t launched = 0, completed = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::string error;
};

class GlooBackend final : public Backend {
 public:
  explicit GlooBackend(std::shared_ptr<gloo::Context> context)
      : context_(std::move(context)), worker_([this] { run(); }) {}

  ~GlooBackend() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    queued_.notify_all();
    worker_.join();
  }

  std::string name() const override { return "gloo"; }

  int add_buffer(uint64_t bytes) override {
    std::lock_guard lock(mu_);
    auto slot = std::make_unique<Slot>();
    slot->data.assign(std::max<uint64_t>(1, (bytes + 3) / 4), 0.0f);
    slots_.push_back(std::move(slot));
    return int(slots_.size() - 1);
  }

  void release_buffers() override {
    std::lock_guard lock(mu_);
    slots_.clear();  // replay() waited for every bucket: nothing is queued
  }

  void start_allreduce(int id) override {
    std::lock_guard lock(mu_);
    slot(id).launched++;
    queue_.push_back(id);
    queued_.notify_one();
  }

  void wait(int id, int64_t* start_ns, int64_t* end_ns) override {
    std::unique_lock lock(mu_);
    Slot& s = slot(id);
    done_.wait(lock, [&] { return s.completed == s.launched; });
    if (!s.error.empty()) throw std::runtime_error(s.error);
    *start_ns = s.start_ns;
    *end_ns = s.end_ns;
  }

  // Through the queue too, so every Gloo call is made by the one worker
  // thread, in the order the caller issued them.
  void barrier() override {
    std::unique_lock lock(mu_);
    const uint64_t mine = ++barriers_launched_;
    queue_.push_back(kBarrier);
    queued_.notify_one();
    done_.wait(lock, [&] { return barriers_completed_ >= mine; });
    if (!barrier_error_.empty()) throw std::runtime_error(barrier_error_);
  }

  float* data(int id) {
    std::lock_guard lock(mu_);
    return slot(id).data.data();
  }

 private:
  Slot& slot(int id) {
    if (id < 0 || size_t(id) >= slots_.size())
      throw std::out_of_range("gloo backend: no buffer " + std::to_string(id));
    return *slots_[size_t(id)];
  }

  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      queued_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      const int id = queue_.front();
      queue_.pop_front();
      Slot* s = id == kBarrier ? nullptr : slots_[size_t(id)].get();
      const uint32_t tag = next_tag_++;
      lock.unlock();
      std::string error = s ? allreduce(*s, tag) : barrier_now(tag);
      lock.lock();
      if (s) {
        s->error = error;
        s->completed++;
      } else {
        barrier_error_ = error;
        barriers_completed_++;
      }
      done_.notify_all();
    }
  }

  // Returns "" or one line saying what failed.
  std::string allreduce(Slot& s, uint32_t tag) {
    try {
      gloo::AllreduceOptions opts(context_);
      opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
      opts.setOutput(s.data.data(), s.data.size());  // no input: reduce in place
      opts.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      opts.setTag(tag);
      opts.setTimeout(kTimeout);
      s.start_ns = clock::monotonic_ns();
      gloo::allreduce(opts);
      s.end_ns = clock::monotonic_ns();
      return "";
    } catch (const std::exception& e) {
      return "gloo all-reduce of " + std::to_string(s.data.size() * 4) +
             " bytes failed: " + e.what();
    }
  }

  std::string barrier_now(uint32_t tag) {
    try {
      gloo::BarrierOptions opts(context_);
      opts.setTag(tag);
      opts.setTimeout(kTimeout);
      gloo::barrier(opts);
      return "";
    } catch (const std::exception& e) {
      return std::string("gloo barrier failed: ") + e.what();
    }
  }

  std::shared_ptr<gloo::Context> context_;
  std::mutex mu_;
  std::condition_variable queued_, done_;
  std::deque<int> queue_;
  std::vector<std::unique_ptr<Slot>> slots_;
  uint32_t next_tag_ = 1;  // the same sequence on every rank: calls are issued in the same order
  uint64_t barriers_launched_ = 0, barriers_completed_ = 0;
  std::string barrier_error_;
  bool stop_ = false;
  std::thread worker_;  // last: starts once everything above exists
};

// The address this rank listens on: it must be one the other ranks can reach.
gloo::transport::tcp::attr device_attr(const RankInfo& info) {
  gloo::transport::tcp::attr attr;
  if (!info.bind_address.empty()) {
    attr.hostname = info.bind_address;
    return attr;
  }
  const char* addr = std::getenv("DDPSCOPE_TUNE_IFACE_ADDR");
  const char* iface = std::getenv("DDPSCOPE_TUNE_IFACE");
  if (iface && *iface && !(addr && *addr))
    attr.iface = iface;
  else
    attr.hostname = addr && *addr ? addr : "127.0.0.1";
  return attr;
}

// Removes the keys this rank wrote to the file store when it goes out of
// scope: after a successful rendezvous nobody needs them (see connect), and
// after a failed one they would only confuse a later run with the same run id.
struct OwnKeysRemover {
  gloo::rendezvous::FileStore& files;
  ~OwnKeysRemover() {
    std::error_code ignored;
    for (const auto& path : files.getAllKeyFilePaths()) std::filesystem::remove(path, ignored);
  }
};

std::shared_ptr<gloo::Context> connect(const RankInfo& info) {
  auto device = gloo::transport::tcp::CreateDevice(device_attr(info));
  gloo::rendezvous::FileStore files(info.rendezvous_dir);
  OwnKeysRemover remover{files};
  gloo::rendezvous::PrefixStore store(info.run_id, files);
  auto context = std::make_shared<gloo::rendezvous::Context>(info.rank, info.world_size);
  context->setTimeout(kTimeout);
  context->connectFullMesh(store, device);
  // Every rank has read every address once all are connected: a barrier
  // makes sure of that before the remover deletes this rank's.
  gloo::BarrierOptions opts(context);
  opts.setTimeout(kTimeout);
  gloo::barrier(opts);
  return context;
}

std::string where(const RankInfo& info) {
  return "rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) +
         ", rendezvous " + info.rendezvous_dir + " run '" + info.run_id + "'";
}

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(const RankInfo& info, std::string* error) {
  if (info.world_size < 1 || info.rank < 0 || info.rank >= info.world_size) {
    *error = "invalid " + where(info);
    return nullptr;
  }
  std::error_code ec;
  if (info.rendezvous_dir.empty() || !std::filesystem::is_directory(info.rendezvous_dir, ec)) {
    *error = "rendezvous directory '" + info.rendezvous_dir + "' does not exist";
    return nullptr;
  }
  try {
    return std::make_unique<GlooBackend>(connect(info));
  } catch (const std::exception& e) {
    *error = "cannot connect (" + where(info) + "): " + e.what();
    return nullptr;
  }
}

// Test hook (declared in tests/replay/backend_hooks.h): the host memory of
// buffer `id`, or nullptr when `b` is not a Gloo backend.
float* gloo_buffer_for_testing(Backend& b, int id) {
  auto* gloo = dynamic_cast<GlooBackend*>(&b);
  return gloo ? gloo->data(id) : nullptr;
}

}  // namespace ddpscope::tuner
