// The backend factories for backends this build does not have: they say so
// (the built ones define their factory in their own file).
#include "tuner/backend.h"

namespace ddpscope::tuner {

#ifndef DDPSCOPE_TUNER_GLOO
std::unique_ptr<Backend> make_gloo_backend(const RankInfo&, std::string* error) {
  *error = "this ddpscope was built without Gloo (install libgloo-dev and rebuild)";
  return nullptr;
}
#endif

#ifndef DDPSCOPE_TUNER_MPI
std::unique_ptr<Backend> make_mpi_backend(std::string* error) {
  *error = "this ddpscope was built without MPI (install libopenmpi-dev and rebuild)";
  return nullptr;
}
#endif

#ifndef DDPSCOPE_TUNER_NCCL
std::unique_ptr<Backend> make_nccl_backend(const RankInfo&, std::string* error) {
  *error = "this ddpscope was built without CUDA and NCCL";
  return nullptr;
}
#endif

}  // namespace ddpscope::tuner
