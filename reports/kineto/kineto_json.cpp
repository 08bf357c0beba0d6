#include "reports/kineto/kineto_json.h"

#include <algorithm>

#include "profiler/core/records.h"
#include "reports/trace/json_text.h"

namespace ddpscope::reports::kineto {

void EventText::complete(const char* cat, std::string_view name, int64_t pid, int64_t tid,
                         int64_t start, int64_t end) {
  if (end == kNoTime || end < start) end = start;
  last_ns_ = std::max(last_ns_, end);
  tracks_.insert({pid, tid});
  next() += "{\"ph\": \"X\", \"cat\": \"";
  buf_.append(cat).append("\", \"name\": ");
  json_text::put(buf_, name);
  pid_tid_ts(pid, tid, start);
  buf_ += ", \"dur\": ";
  json_text::put_us(buf_, end - start);
  buf_ += ", \"args\": {";
  for (size_t i = 0; i < args_.size(); ++i) {
    buf_ += i ? ", \"" : "\"";
    buf_.append(args_[i].key).append("\": ");
    if (args_[i].is_text)
      json_text::put(buf_, args_[i].text);
    else
      json_text::put(buf_, args_[i].number);
  }
  buf_ += "}}";
  args_.clear();
}

void EventText::flow(char ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  next() += std::string("{\"ph\": \"") + ph + "\", \"id\": " + std::to_string(id);
  pid_tid_ts(pid, tid, ts);
  buf_ += ph == 'f' ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}"
                    : ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}";
}

void EventText::meta(const char* what, int64_t pid, int64_t tid, const std::string& name) {
  next() += std::string("{\"ph\": \"M\", \"name\": \"") + what + "\"";
  pid_tid_ts(pid, tid, origin_);
  buf_ += ", \"args\": {\"name\": ";
  json_text::put(buf_, name);
  buf_ += "}}";
}

void EventText::flush() {
  os_.write(buf_.data(), std::streamsize(buf_.size()));
  buf_.clear();
}

// Each event on its own line, after a comma unless it is the first.
std::string& EventText::next() {
  if (buf_.size() >= kFlushAt) flush();
  buf_ += events_++ ? ",\n  " : "\n  ";
  return buf_;
}

void EventText::pid_tid_ts(int64_t pid, int64_t tid, int64_t ts) {
  buf_ += ", \"pid\": ";
  json_text::put(buf_, pid);
  buf_ += ", \"tid\": ";
  json_text::put(buf_, tid);
  buf_ += ", \"ts\": ";
  json_text::put_us(buf_, ts - origin_);
}

}  // namespace ddpscope::reports::kineto
