// bench_machine_repeatability: how far the machine's own speed moves, for the
// work one node's Gloo all-reduce is made of, with nothing else running.
//
// One node's sweeps (1x2, 1x4 in bench/model_accuracy.sh) are bound by the
// CPU: copies into and out of buffers and TCP over loopback. Their
// measurement cannot repeat better than the machine repeats the same fixed
// work, so this prints that floor. Every `--interval` seconds it times, once
// each, fixed work of four kinds:
//   memcpy     32 copies of a 16 MiB buffer (a gradient bucket's size), GB/s
//   tcp bulk   64 MiB sent over a loopback TCP connection, thread to thread, GB/s
//   tcp rtt    2,000 one-byte round trips over loopback TCP (TCP_NODELAY), µs each
//   alu        3·10^8 steps of a dependent integer recurrence, ms
// then per kind the median, p10..p90, min..max and (max − min) / median.
// No target: the figure is the floor under any CPU-bound measurement here.
//
//   bench_machine_repeatability [--samples N] [--interval S]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "profiler/core/stats.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

double memcpy_gb_per_s() {
  constexpr size_t kBytes = 16u << 20;
  constexpr int kCopies = 32;
  std::vector<char> from(kBytes, 1), to(kBytes, 2);
  auto start = Clock::now();
  for (int i = 0; i < kCopies; ++i) {
    std::memcpy(to.data(), from.data(), kBytes);
    from[size_t(i)] = to[size_t(i) + 1];  // each copy depends on the last: none is elided
  }
  return kCopies * double(kBytes) / seconds_since(start) / 1e9;
}

// A connected loopback TCP pair: [0] the client's end, [1] the accepted end.
std::array<int, 2> loopback_pair() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || bind(listener, (sockaddr*)&addr, len) != 0 || listen(listener, 1) != 0 ||
      getsockname(listener, (sockaddr*)&addr, &len) != 0)
    fail("loopback listener");
  int client = socket(AF_INET, SOCK_STREAM, 0);
  if (client < 0 || connect(client, (sockaddr*)&addr, len) != 0) fail("loopback connect");
  int server = accept(listener, nullptr, nullptr);
  if (server < 0) fail("loopback accept");
  close(listener);
  int one = 1;
  for (int fd : {client, server}) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return {client, server};
}

void send_all(int fd, const char* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t n = send(fd, data, bytes, 0);
    if (n <= 0) fail("send");
    data += n, bytes -= size_t(n);
  }
}

void receive_all(int fd, char* data, size_t bytes) {
  while (bytes > 0) {
    ssize_t n = recv(fd, data, bytes, 0);
    if (n <= 0) fail("recv");
    data += n, bytes -= size_t(n);
  }
}

double tcp_bulk_gb_per_s() {
  constexpr size_t kBytes = 64u << 20, kChunk = 1u << 20;
  auto [client, server] = loopback_pair();
  auto start = Clock::now();
  std::thread receiver([fd = server] {
    std::vector<char> chunk(kChunk);
    for (size_t got = 0; got < kBytes; got += kChunk) receive_all(fd, chunk.data(), kChunk);
  });
  std::vector<char> chunk(kChunk, 3);
  for (size_t sent = 0; sent < kBytes; sent += kChunk) send_all(client, chunk.data(), kChunk);
  receiver.join();
  double s = seconds_since(start);
  close(client), close(server);
  return double(kBytes) / s / 1e9;
}

double tcp_round_trip_us() {
  constexpr int kTrips = 2000;
  auto [client, server] = loopback_pair();
  auto start = Clock::now();
  std::thread echo([fd = server] {
    char byte;
    for (int i = 0; i < kTrips; ++i) receive_all(fd, &byte, 1), send_all(fd, &byte, 1);
  });
  char byte = 7;
  for (int i = 0; i < kTrips; ++i) send_all(client, &byte, 1), receive_all(client, &byte, 1);
  echo.join();
  double s = seconds_since(start);
  close(client), close(server);
  return s / kTrips * 1e6;
}

double alu_ms() {
  volatile uint64_t state = 1;  // volatile: the recurrence is computed, step by step
  auto start = Clock::now();
  for (long i = 0; i < 300'000'000; ++i)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
  return seconds_since(start) * 1e3;
}

struct Kind {
  const char* name;
  const char* unit;
  std::function<double()> measure;
  std::vector<double> samples;
};

void print_summary(const Kind& k) {
  using ddpscope::stats::quantile;
  double median = quantile(k.samples, 0.5), lo = quantile(k.samples, 0),
         hi = quantile(k.samples, 1);
  std::printf(
      "%-9s %-5s median %8.2f  p10..p90 %8.2f..%-8.2f  min..max %8.2f..%-8.2f  spread %5.1f %%\n",
      k.name, k.unit, median, quantile(k.samples, 0.1), quantile(k.samples, 0.9), lo, hi,
      100 * (hi - lo) / median);
}

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [--samples N] [--interval S]   (defaults 40, 15)\n", argv0);
  std::exit(2);
}

int parse_positive(const char* argv0, const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) usage(argv0);
  return int(v);
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 40, interval_s = 15;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[++i] : "";
    if (flag == "--samples")
      samples = parse_positive(argv[0], value);
    else if (flag == "--interval")
      interval_s = parse_positive(argv[0], value);
    else
      usage(argv[0]);
  }
  std::vector<Kind> kinds = {{"memcpy", "GB/s", memcpy_gb_per_s, {}},
                             {"tcp bulk", "GB/s", tcp_bulk_gb_per_s, {}},
                             {"tcp rtt", "us", tcp_round_trip_us, {}},
                             {"alu", "ms", alu_ms, {}}};
  std::printf("machine repeatability: %d samples, one every %d s, %u cores\n", samples, interval_s,
              std::thread::hardware_concurrency());
  for (int s = 0; s < samples; ++s) {
    auto start = Clock::now();
    std::time_t now = std::time(nullptr);
    char stamp[16];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::gmtime(&now));
    std::printf("%s", stamp);
    for (Kind& k : kinds) {
      k.samples.push_back(k.measure());
      std::printf("  %s %.2f %s", k.name, k.samples.back(), k.unit);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (s + 1 < samples) std::this_thread::sleep_until(start + std::chrono::seconds(interval_s));
  }
  for (const Kind& k : kinds) print_summary(k);
}
