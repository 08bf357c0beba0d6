#include "injector/runtime/safe_read.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

namespace ddpscope::inject {
namespace {

// Where process_vm_readv is refused (a sandbox's seccomp filter), a pipe does
// the same: write(2) fails with EFAULT on memory it cannot read.
bool read_through_pipe(const void* addr, void* out, size_t n) {
  static std::mutex mu;
  static int fds[2] = {-1, -1};
  std::lock_guard<std::mutex> lock(mu);
  if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  auto* dst = static_cast<char*>(out);
  const auto* src = static_cast<const char*>(addr);
  while (n > 0) {
    size_t chunk = n < 4096 ? n : 4096;
    ssize_t w = write(fds[1], src, chunk);
    if (w <= 0) return false;
    ssize_t r = read(fds[0], dst, size_t(w));
    if (r != w) return false;
    src += w, dst += w, n -= size_t(w);
  }
  return true;
}

}  // namespace

bool safe_read(const void* addr, void* out, size_t n) {
  if (!addr) return false;
  iovec local{out, n};
  iovec remote{const_cast<void*>(addr), n};
  ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == ssize_t(n)) return true;
  if (got < 0 && (errno == ENOSYS || errno == EPERM)) return read_through_pipe(addr, out, n);
  return false;
}

}  // namespace ddpscope::inject
