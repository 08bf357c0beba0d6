// Rank files on a directory several hosts share. SQLite's WAL needs shared
// memory between the processes that open a file, which a network file
// system cannot give (sqlite.org/wal.html), so a rank file there uses a
// rollback journal instead, and the writer holds its lock for the file's
// whole life (one writer, no readers until it is closed). Which file systems
// count as network ones is read from statfs(2); DDPSCOPE_NETWORK_FS=1 or 0
// overrides (a FUSE mount of object storage, a test).
#pragma once

#include <string>

namespace ddpscope::core {

// True when `dir` is on NFS, SMB/CIFS, Lustre, GPFS, BeeGFS, CephFS, AFS,
// 9P or FUSE, or DDPSCOPE_NETWORK_FS=1 says so.
bool on_network_fs(const std::string& dir);

// The file system's name for messages ("nfs", "local", ...).
std::string fs_kind(const std::string& dir);

// Creates `path` only if no file has that name (O_CREAT | O_EXCL): the one
// atomic way to claim a name every host can see. False if it existed.
bool claim_file(const std::string& path);

}  // namespace ddpscope::core
