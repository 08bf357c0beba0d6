#include "injector/runtime/writer.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "injector/runtime/log.h"
#include "injector/runtime/rank_file.h"
#include "injector/runtime/thread_buffer.h"

namespace ddpscope::inject {
namespace {

struct WriterState {
  WriterConfig config;
  BufferRegistry* buffers = nullptr;
  int wake_pipe[2] = {-1, -1};
  pthread_t thread{};
  bool started = false;
  std::atomic<bool> stop{false};
  std::atomic<bool> stopped{false};
  std::atomic<uint64_t> flushes{0};
  std::unique_ptr<RankFile> file;
};

WriterState* g_writer = nullptr;  // leaked on purpose: used during exit

void drain_wakeups(int fd) {
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
}

void* writer_main(void*) {
  WriterState& w = *g_writer;
  w.file = std::make_unique<RankFile>(w.config.out_dir, w.buffers);
  pollfd pfd{w.wake_pipe[0], POLLIN, 0};
  while (!w.stop.load(std::memory_order_acquire)) {
    poll(&pfd, 1, w.config.flush_ms);
    drain_wakeups(w.wake_pipe[0]);
    w.file->flush(false);
    w.flushes.fetch_add(1, std::memory_order_release);
  }
  w.file->flush(true);
  w.file->close();
  w.flushes.fetch_add(1, std::memory_order_release);
  w.stopped.store(true, std::memory_order_release);
  return nullptr;
}

void wake() {
  char c = 1;
  ssize_t n = write(g_writer->wake_pipe[1], &c, 1);
  (void)n;  // a full pipe already means "wake up"
}

}  // namespace

void writer_start(const WriterConfig& config, BufferRegistry* buffers) {
  g_writer = new WriterState;
  g_writer->config = config;
  g_writer->buffers = buffers;
  if (pipe2(g_writer->wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    notice_once(Notice::misc, "cannot create a pipe (%s); recording disabled", strerror(errno));
    return;
  }
  // The app's signals must never land on our thread: block them all while
  // creating it (the new thread inherits the mask), then restore ours.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_writer->started = pthread_create(&g_writer->thread, nullptr, writer_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void writer_flush_from_signal() {
  if (!g_writer || !g_writer->started || g_writer->stopped.load()) return;
  uint64_t before = g_writer->flushes.load(std::memory_order_acquire);
  wake();
  // Wait for a flush that started after our request: two completions.
  timespec nap{0, 1000000};
  for (int i = 0; i < 3000 && g_writer->flushes.load(std::memory_order_acquire) < before + 2; ++i)
    nanosleep(&nap, nullptr);
}

void writer_stop() {
  if (!g_writer || !g_writer->started || g_writer->stop.exchange(true)) return;
  wake();
  pthread_join(g_writer->thread, nullptr);
}

}  // namespace ddpscope::inject
