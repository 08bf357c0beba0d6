#include "injector/gloo/gloo_layout.h"

#include <dlfcn.h>

#include <cstring>

#include "injector/runtime/log.h"
#include "injector/runtime/safe_read.h"

namespace ddpscope::inject::gloo_layout {

std::atomic<bool> g_off{false};
std::atomic<bool> g_verified[kOps];

namespace {

constexpr uint64_t kMaxElements = uint64_t(1) << 40;
constexpr int kMaxRanks = 1 << 20;

// The symbol of the vtable an object's first word points into.
bool vtable_named(const void* object, const char* prefix) {
  bool ok = true;
  uint64_t vptr = safe_word(object, ok);
  Dl_info info{};
  return ok && vptr && dladdr(reinterpret_cast<void*>(vptr), &info) && info.dli_sname &&
         strncmp(info.dli_sname, prefix, strlen(prefix)) == 0;
}

}  // namespace

uint64_t Probe::word(const void* field) {
  bool ok = true;
  uint64_t w = safe_word(field, ok);
  require(ok, "a field lies in unreadable memory");
  return ok ? w : 0;
}

// Where rank and size lie: after the vtable pointer of a polymorphic Context
// (our headers), or at offset 0 of a plain Context held inside a polymorphic
// derived one (whose vtable pointer then sits just before it).
static int rank_offset_of(const gloo::Context* ctx) {
  auto* bytes = reinterpret_cast<const char*>(ctx);
  if (vtable_named(ctx, "_ZTVN4gloo"))
    return int(reinterpret_cast<const char*>(&ctx->rank) - bytes);
  if (vtable_named(bytes - sizeof(void*), "_ZTVN4gloo")) return 0;
  return -1;
}

const gloo::Context* Probe::context(const std::shared_ptr<gloo::Context>* field) {
  // libstdc++'s shared_ptr holds the object pointer in its first word.
  auto* ctx = reinterpret_cast<const gloo::Context*>(word(field));
  if (!ok()) return nullptr;
  int offset = ctx ? rank_offset_of(ctx) : -1;
  if (offset < 0) {
    fail("the context field does not point to a gloo::Context");
    return nullptr;
  }
  int known = gloo_access::g_context_rank_offset.load(std::memory_order_relaxed);
  if (known >= 0 && known != offset) {
    fail("two contexts are laid out differently");
    return nullptr;
  }
  int32_t ranks[2] = {-1, 0};
  if (!safe_read(reinterpret_cast<const char*>(ctx) + offset, ranks, sizeof ranks))
    fail("the context's rank and size are unreadable");
  require(ranks[1] > 0 && ranks[1] <= kMaxRanks && ranks[0] >= 0 && ranks[0] < ranks[1],
          "the context's rank and size are out of range");
  if (ok()) gloo_access::g_context_rank_offset.store(offset, std::memory_order_relaxed);
  size_ = ranks[1];
  return ctx;
}

uint64_t Probe::buffer(const std::unique_ptr<gloo::transport::UnboundBuffer>* field) {
  auto* buf = reinterpret_cast<const gloo::transport::UnboundBuffer*>(word(field));
  if (!ok() || !buf) return 0;
  if (!vtable_named(buf, "_ZTVN4gloo9transport")) {
    fail("a buffer field does not point to a gloo transport buffer");
    return 0;
  }
  return word(&buf->size);
}

uint64_t Probe::first_buffer(
    const std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>>* field, size_t* count) {
  // libstdc++'s vector: begin, end, capacity pointers.
  auto* words = reinterpret_cast<const uint64_t*>(field);
  uint64_t begin = word(words), end = word(words + 1);
  *count = 0;
  if (!ok()) return 0;
  require(end >= begin && (end - begin) % 8 == 0 && (end - begin) / 8 <= kMaxRanks,
          "a buffer list is not a vector");
  *count = ok() ? (end - begin) / 8 : 0;
  if (*count == 0) return 0;
  return buffer(reinterpret_cast<const std::unique_ptr<gloo::transport::UnboundBuffer>*>(begin));
}

size_t Probe::vector_size(const std::vector<size_t>* field) {
  auto* words = reinterpret_cast<const uint64_t*>(field);
  uint64_t begin = word(words), end = word(words + 1);
  require(ok() && end >= begin && (end - begin) % sizeof(size_t) == 0 &&
              (end - begin) / sizeof(size_t) <= size_t(kMaxRanks),
          "a count list is not a vector");
  return ok() ? (end - begin) / sizeof(size_t) : 0;
}

bool Probe::element_size(const size_t* field, size_t* out) {
  *out = word(field);
  require(*out >= 1 && *out <= 16, "the element size is not 1..16 bytes");
  return ok();
}

bool Probe::root(const int* field, int* out) {
  *out = int(word(field));
  require(*out >= 0 && *out < size_, "the root is not a rank of the context");
  return ok();
}

bool settle(int op_index, const Probe& p, const void* real) {
  if (p.ok()) {
    g_verified[op_index].store(true, std::memory_order_release);
    return true;
  }
  if (!g_off.exchange(true)) {
    Dl_info info{};
    const char* where = dladdr(real, &info) && info.dli_fname ? info.dli_fname : "this process";
    notice_once(Notice::misc,
                "the Gloo in %s is not laid out as the Gloo headers ddpscope was built with (%s); "
                "Gloo calls pass through unrecorded",
                where, p.failed());
  }
  return false;
}

}  // namespace ddpscope::inject::gloo_layout
