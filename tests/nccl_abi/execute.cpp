// Data movement for a complete operation. Inputs are read (or reduced) into scratch
// memory before any output is written, so in-place calls (recvbuff == sendbuff, or the
// in-place forms of all-gather and reduce-scatter) read unmodified inputs.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "op.h"
#include "reduce.h"

namespace ddpscope::testnccl {
namespace {

using Bytes = std::vector<unsigned char>;

void copy(void* dst, const void* src, size_t n) {
  if (n != 0) std::memcpy(dst, src, n);
}

unsigned char* at(void* base, size_t offset) { return static_cast<unsigned char*>(base) + offset; }

// Concatenation of `bytes` from every rank's sendbuff, in rank order.
Bytes gather_inputs(const std::vector<Request>& parts, size_t bytes) {
  Bytes all(parts.size() * bytes);
  for (size_t r = 0; r < parts.size(); ++r) copy(all.data() + r * bytes, parts[r].send, bytes);
  return all;
}

ncclResult_t reduction(const Op& op, size_t elems, Bytes* out) {
  std::vector<const void*> inputs;
  for (const Request& p : op.parts) inputs.push_back(p.send);
  out->resize(elems * element_size(op.first.dtype));
  if (elems == 0) return ncclSuccess;
  return reduce_arrays(inputs, out->data(), elems, op.first.dtype, op.first.op);
}

// Members of each color ordered by (key, old rank) form one new communicator on the
// same devices; NCCL_SPLIT_NOCOLOR ranks get no communicator.
ncclResult_t split(const Op& op) {
  std::map<int, std::vector<std::pair<int, int>>> by_color;  // color -> (key, old rank)
  for (int r = 0; r < static_cast<int>(op.parts.size()); ++r) {
    const Request& p = op.parts[r];
    if (p.color == DDPSCOPE_NCCL_SPLIT_NOCOLOR) {
      *p.newcomm = nullptr;
    } else {
      by_color[p.color].push_back({p.key, r});
    }
  }
  for (auto& [color, members] : by_color) {
    std::sort(members.begin(), members.end());
    std::vector<int> devices;
    for (const auto& [key, r] : members) devices.push_back(op.parts[r].device);
    const std::vector<ncclComm*> comms = make_comm_group(devices);
    for (size_t i = 0; i < members.size(); ++i) {
      const Request& p = op.parts[members[i].second];
      if (!p.placeholder) {
        *p.newcomm = comms[i];
        continue;
      }
      p.placeholder->rank = comms[i]->rank;
      p.placeholder->nranks = comms[i]->nranks;
      p.placeholder->device = comms[i]->device;
      p.placeholder->shared = comms[i]->shared;
      delete comms[i];
      p.placeholder->async_error.store(ncclSuccess, std::memory_order_release);  // ready
    }
  }
  return ncclSuccess;
}

}  // namespace

ncclResult_t execute(const Op& op) {
  const Request& f = op.first;
  const std::vector<Request>& parts = op.parts;
  const size_t n = parts.size();
  const size_t bytes = f.count * element_size(f.dtype);  // one rank's block
  Bytes tmp;
  switch (f.kind) {
    case Kind::kAllReduce:
      if (ncclResult_t r = reduction(op, f.count, &tmp)) return r;
      for (const Request& p : parts) copy(p.recv, tmp.data(), bytes);
      return ncclSuccess;
    case Kind::kReduce:
      if (ncclResult_t r = reduction(op, f.count, &tmp)) return r;
      copy(parts[f.root].recv, tmp.data(), bytes);
      return ncclSuccess;
    case Kind::kReduceScatter:
      if (ncclResult_t r = reduction(op, f.count * n, &tmp)) return r;
      for (size_t r = 0; r < n; ++r) copy(parts[r].recv, tmp.data() + r * bytes, bytes);
      return ncclSuccess;
    case Kind::kBroadcast:
      tmp.resize(bytes);
      copy(tmp.data(), parts[f.root].send, bytes);
      for (const Request& p : parts) copy(p.recv, tmp.data(), bytes);
      return ncclSuccess;
    case Kind::kAllGather:
      tmp = gather_inputs(parts, bytes);
      for (const Request& p : parts) copy(p.recv, tmp.data(), n * bytes);
      return ncclSuccess;
    case Kind::kGather:
      tmp = gather_inputs(parts, bytes);
      copy(parts[f.root].recv, tmp.data(), n * bytes);
      return ncclSuccess;
    case Kind::kScatter:
      tmp.resize(n * bytes);
      copy(tmp.data(), parts[f.root].send, n * bytes);
      for (size_t r = 0; r < n; ++r) copy(parts[r].recv, tmp.data() + r * bytes, bytes);
      return ncclSuccess;
    case Kind::kAlltoAll:
      // Block j of rank i's input goes to block i of rank j's output.
      tmp = gather_inputs(parts, n * bytes);
      for (size_t j = 0; j < n; ++j) {
        for (size_t i = 0; i < n; ++i)
          copy(at(parts[j].recv, i * bytes), tmp.data() + (i * n + j) * bytes, bytes);
      }
      return ncclSuccess;
    case Kind::kSend:
    case Kind::kRecv: {
      const Request& s = parts[0];
      const size_t n_bytes = s.count * element_size(s.dtype);
      if (n_bytes != 0) std::memmove(parts[1].recv, s.send, n_bytes);
      return ncclSuccess;
    }
    case Kind::kSplit:
      return split(op);
  }
  return ncclInternalError;
}

}  // namespace ddpscope::testnccl
