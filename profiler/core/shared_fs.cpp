#include "profiler/core/shared_fs.h"

#include <fcntl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ddpscope::core {
namespace {

struct FsType {
  uint64_t magic;
  const char* name;
};

// statfs f_type values (linux/magic.h and the file systems' own headers).
constexpr FsType kNetworkFs[] = {
    {0x6969, "nfs"},        {0x517B, "smb"},      {0xFF534D42, "cifs"},   {0xFE534D42, "smb2"},
    {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"}, {0x19830326, "beegfs"}, {0x00C36400, "cephfs"},
    {0x5346414F, "afs"},    {0x01021997, "9p"},   {0x65735546, "fuse"},
};

const char* network_fs_name(const std::string& dir) {
  struct statfs s;
  if (statfs(dir.c_str(), &s) != 0) return nullptr;
  for (const auto& t : kNetworkFs)
    if (uint64_t(uint32_t(s.f_type)) == t.magic) return t.name;
  return nullptr;
}

}  // namespace

bool on_network_fs(const std::string& dir) {
  if (const char* v = getenv("DDPSCOPE_NETWORK_FS"); v && *v) return strcmp(v, "0") != 0;
  return network_fs_name(dir) != nullptr;
}

std::string fs_kind(const std::string& dir) {
  const char* name = network_fs_name(dir);
  return name ? name : "local";
}

bool claim_file(const std::string& path) {
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace ddpscope::core
