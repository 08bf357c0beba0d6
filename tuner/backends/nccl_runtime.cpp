// Loads NCCL and the CUDA driver by name (see nccl_runtime.h for why).
#include "tuner/backends/nccl_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <type_traits>

namespace ddpscope::tuner {
namespace {

// Two steps, so that the argument is macro-expanded first: cuMemAlloc is
// looked up as "cuMemAlloc_v2", the symbol cuda.h's prototype belongs to.
#define DDPSCOPE_STRINGIFY(x) #x
#define DDPSCOPE_SYMBOL_OF(fn) DDPSCOPE_STRINGIFY(fn)

// Binds every entry point from `lib`; false with `missing` set to the first
// symbol the library lacks.
class Binder {
 public:
  explicit Binder(void* lib) : lib_(lib) {}
  template <typename Fn>
  void operator()(Fn& fn, const char* symbol) {
    void* p = dlsym(lib_, symbol);
    fn = reinterpret_cast<Fn>(p);
    if (!p && missing_.empty()) missing_ = symbol;
  }
  const std::string& missing() const { return missing_; }

 private:
  void* lib_;
  std::string missing_;
};

#define DDPSCOPE_BIND(bind, fn) bind(rt.fn, DDPSCOPE_SYMBOL_OF(fn))

std::string bind_nccl(void* lib, NcclRuntime& rt) {
  Binder bind(lib);
  DDPSCOPE_BIND(bind, ncclGetVersion);
  DDPSCOPE_BIND(bind, ncclGetErrorString);
  DDPSCOPE_BIND(bind, ncclGetUniqueId);
  DDPSCOPE_BIND(bind, ncclCommInitRank);
  DDPSCOPE_BIND(bind, ncclCommDestroy);
  DDPSCOPE_BIND(bind, ncclAllReduce);
  return bind.missing();
}

std::string bind_driver(void* lib, NcclRuntime& rt) {
  Binder bind(lib);
  DDPSCOPE_BIND(bind, cuInit);
  DDPSCOPE_BIND(bind, cuGetErrorString);
  DDPSCOPE_BIND(bind, cuDeviceGetCount);
  DDPSCOPE_BIND(bind, cuDeviceGet);
  DDPSCOPE_BIND(bind, cuDevicePrimaryCtxRetain);
  DDPSCOPE_BIND(bind, cuDevicePrimaryCtxRelease);
  DDPSCOPE_BIND(bind, cuCtxSetCurrent);
  DDPSCOPE_BIND(bind, cuStreamCreate);
  DDPSCOPE_BIND(bind, cuStreamSynchronize);
  DDPSCOPE_BIND(bind, cuStreamDestroy);
  DDPSCOPE_BIND(bind, cuEventCreate);
  DDPSCOPE_BIND(bind, cuEventRecord);
  DDPSCOPE_BIND(bind, cuEventSynchronize);
  DDPSCOPE_BIND(bind, cuEventElapsedTime);
  DDPSCOPE_BIND(bind, cuEventDestroy);
  DDPSCOPE_BIND(bind, cuMemAlloc);
  DDPSCOPE_BIND(bind, cuMemFree);
  DDPSCOPE_BIND(bind, cuMemsetD8);
  return bind.missing();
}

#undef DDPSCOPE_BIND

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

// NCCL first: it needs no device, so a CPU machine can still say which NCCL a
// GPU run would use. Then the driver, and cuInit, which fails on a machine
// with a driver but no device.
std::string load(NcclRuntime& rt) {
  const char* env = std::getenv("DDPSCOPE_NCCL_LIBRARY");
  rt.nccl_path = env && *env ? env : "libnccl.so.2";
  void* nccl = dlopen(rt.nccl_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!nccl)
    return "no NCCL: cannot load " + rt.nccl_path + " (" + dl_error() +
           "); set DDPSCOPE_NCCL_LIBRARY to its path (PyTorch's wheel keeps it in "
           "site-packages/nvidia/nccl/lib/)";
  if (std::string m = bind_nccl(nccl, rt); !m.empty())
    return "no NCCL: " + rt.nccl_path + " has no " + m;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) return "no CUDA driver: cannot load libcuda.so.1 (" + dl_error() + ")";
  if (std::string m = bind_driver(driver, rt); !m.empty())
    return "no CUDA driver: libcuda.so.1 has no " + m;
  if (CUresult r = rt.cuInit(0); r != CUDA_SUCCESS)
    return "no CUDA device: " + driver_error(rt, r, "cuInit");
  return "";
}

}  // namespace

const NcclRuntime* load_nccl_runtime(std::string* error) {
  static NcclRuntime rt;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] { failure = load(rt); });
  if (!failure.empty()) {
    *error = failure;
    return nullptr;
  }
  return &rt;
}

std::string driver_error(const NcclRuntime& rt, CUresult r, const char* what) {
  const char* text = nullptr;
  if (rt.cuGetErrorString) rt.cuGetErrorString(r, &text);
  return std::string(what) + ": " + (text ? text : "CUDA error " + std::to_string(int(r)));
}

}  // namespace ddpscope::tuner
