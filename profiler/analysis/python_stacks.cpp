#include "profiler/analysis/python_stacks.h"

#include <algorithm>

namespace ddpscope::analysis {
namespace {

// One thread of a dump: its header line and its frames, innermost first.
struct DumpThread {
  bool current = false;
  std::vector<std::string> frames;  // "file:line in function"
  bool module_at_bottom = false;
};

// '  File "x.py", line 12 in f' -> 'x.py:12 in f'
std::string frame_of(const std::string& line) {
  size_t q1 = line.find('"'), q2 = line.rfind('"');
  size_t at = line.find(", line ", q2);
  if (q1 == std::string::npos || q2 <= q1 || at == std::string::npos) return "";
  std::string file = line.substr(q1 + 1, q2 - q1 - 1);
  std::string rest = line.substr(at + 7);  // "12 in f"
  size_t in = rest.find(" in ");
  if (in == std::string::npos) return file + ":" + rest;
  return file + ":" + rest.substr(0, in) + rest.substr(in);
}

std::vector<DumpThread> dump_threads(const std::string& dump) {
  std::vector<DumpThread> out;
  size_t at = 0;
  while (at < dump.size()) {
    size_t nl = dump.find('\n', at);
    std::string line = dump.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? dump.size() : nl + 1;
    if (line.rfind("Thread 0x", 0) == 0 || line.rfind("Current thread 0x", 0) == 0) {
      out.push_back({line.rfind("Current", 0) == 0, {}, false});
    } else if (!out.empty() && line.find("File \"") != std::string::npos) {
      std::string f = frame_of(line);
      if (f.empty()) continue;
      out.back().module_at_bottom =
          f.size() >= 11 && f.compare(f.size() - 11, 11, " in <module>") == 0;
      out.back().frames.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> main_thread_frames(const std::string& dump, size_t most) {
  auto threads = dump_threads(dump);
  auto it = std::find_if(threads.begin(), threads.end(),
                         [](const DumpThread& t) { return t.module_at_bottom; });
  if (it == threads.end())
    it =
        std::find_if(threads.begin(), threads.end(), [](const DumpThread& t) { return t.current; });
  if (it == threads.end()) return {};
  std::vector<std::string> frames = it->frames;
  if (frames.size() > most) frames.resize(most);
  return frames;
}

bool users_code(const std::string& frame) {
  // ddpscope's own start-up hook is in the stack of every collective it
  // follows (torch.distributed's wrapped calls, FSDP's methods), and runs
  // from ddpscope's folder, not from a package's.
  for (const char* lib : {"/site-packages/", "/dist-packages/", "/lib/python3", "/ddpscope_ddp/"})
    if (frame.find(lib) != std::string::npos) return false;
  return true;
}

}  // namespace ddpscope::analysis
