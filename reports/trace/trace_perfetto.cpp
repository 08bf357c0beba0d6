// The trace in Perfetto's own format: a Trace of TracePackets carrying
// TrackDescriptors and TrackEvents (protos/perfetto/trace/ in
// github.com/google/perfetto), a fraction of the JSON's size.
//
//  - One packet sequence (trusted_packet_sequence_id 1); its first packet
//    clears the incremental state, and event names, categories, arg names and
//    text arg values are interned on it (InternedData): each string is written
//    once, events carry its iid.
//  - A track per rank, named as the JSON's process, and under it a track per
//    stream, thread, kernel kind or NVTX domain, named as the JSON's threads.
//    Ranks are not given as OS processes: their pids would collide across
//    hosts, and pid 0 is the idle process to Perfetto.
//  - A slice is a TYPE_SLICE_BEGIN packet (name, category, args as
//    DebugAnnotations) and a TYPE_SLICE_END packet: TrackEvent has no complete
//    events. An END closes the innermost open slice of its track, so a slice
//    that overlaps another without nesting goes on a sibling track of the same
//    name (a lane), which the UI shows merged with it.
//  - Timestamps in ns from the run's earliest event, as the JSON's.
//  - Packets are deflated about 1 MiB at a time into TracePacket
//    .compressed_packets, as Perfetto's own tracing service writes them
//    (packet_deflater.h).
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "reports/trace/packet_deflater.h"
#include "reports/trace/proto_wire.h"
#include "reports/trace/trace_events.h"
#include "reports/trace/trace_writers.h"

namespace ddpscope::reports::trace {
namespace {

// Field numbers and enum values, from the .proto file named above each group
// (under protos/perfetto/trace/).
namespace pb {
// trace.proto: Trace
constexpr uint32_t kPacket = 1;
// trace_packet.proto: TracePacket
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kSequenceId = 10;  // trusted_packet_sequence_id
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint64_t kIncrementalStateCleared = 1;  // SequenceFlags
constexpr uint64_t kNeedsIncrementalState = 2;
// track_event/track_descriptor.proto: TrackDescriptor
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint32_t kDescription = 14;
constexpr uint64_t kOrderingExplicit = 3;  // ChildTracksOrdering.EXPLICIT
// track_event/track_event.proto: TrackEvent
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint64_t kSliceBegin = 1;  // Type
constexpr uint64_t kSliceEnd = 2;
// track_event/debug_annotation.proto: DebugAnnotation
constexpr uint32_t kArgNameIid = 1;
constexpr uint32_t kArgIntValue = 4;
constexpr uint32_t kArgStringValueIid = 17;
// interned_data/interned_data.proto: InternedData. Every entry used here
// (EventCategory, EventName, DebugAnnotationName, InternedString) is
// {iid = 1, name or str = 2}.
constexpr uint32_t kInternedCategories = 1;
constexpr uint32_t kInternedNames = 2;
constexpr uint32_t kInternedArgNames = 3;
constexpr uint32_t kInternedArgStrings = 29;  // debug_annotation_string_values
constexpr uint32_t kEntryIid = 1;
constexpr uint32_t kEntryText = 2;
}  // namespace pb

constexpr uint64_t kSequence = 1;
constexpr size_t kChunkBytes = 1 << 20;  // packets deflated together
// The most a packet's own fields take (proto::Cursor's room): two messages
// (the packet, its event or descriptor) and at most eight varint fields
// besides its strings; and each arg: a message of two varint fields.
constexpr size_t kPacketRoom = 2 * proto::Cursor::kMessageRoom + 16 * proto::Cursor::kVarintRoom;
constexpr size_t kArgRoom = proto::Cursor::kMessageRoom + 4 * proto::Cursor::kVarintRoom;

// Perfetto's strings are UTF-8; names from a capture are bytes. Invalid
// sequences become U+FFFD, as in the JSON trace (the same nlohmann handling).
std::string utf8(std::string_view s) {
  if (std::all_of(s.begin(), s.end(), [](char c) { return uint8_t(c) < 0x80; }))
    return std::string(s);
  auto quoted =
      nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

// One interning table of the sequence: a string's iid, and its InternedData
// entry appended to `pending` the first time the string is seen.
class Interner {
 public:
  explicit Interner(uint32_t field) : field_(field) {}
  // For names that are string literals (categories, arg keys): found by
  // address after the first time, in a slot its address picks (a few dozen
  // literals: a clash only costs the lookup by text).
  uint64_t iid(const char* literal, proto::Bytes& pending) {
    auto& slot = literals_[(reinterpret_cast<uintptr_t>(literal) >> 3) % literals_.size()];
    if (slot.first != literal) slot = {literal, iid(std::string_view(literal), pending)};
    return slot.second;
  }
  uint64_t iid(std::string_view s, proto::Bytes& pending) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    uint64_t id = ids_.size() + 1;  // 0 means "not set"
    ids_.emplace(std::string(s), id);
    proto::Message entry(pending, field_);
    proto::put_uint(pending, pb::kEntryIid, id);
    proto::put_bytes(pending, pb::kEntryText, utf8(s));
    return id;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  uint32_t field_;
  std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> ids_;
  std::array<std::pair<const char*, uint64_t>, 61> literals_{};
};

// The last string interned for one purpose (a track's event names, an arg's
// text values): runs of the same name cost a comparison, not a hash lookup.
struct LastIid {
  std::string text;
  uint64_t iid = 0;
  uint64_t of(std::string_view s, Interner& interner, proto::Bytes& pending) {
    if (iid == 0 || s != text) {
      iid = interner.iid(s, pending);
      text.assign(s);
    }
    return iid;
  }
};

// One track of the file. Its slices arrive in order of start and nest: a
// slice goes here if it starts no earlier than the last one (so what closed
// before it stays closed) and ends within the innermost slice still open.
struct Lane {
  uint64_t uuid;
  int64_t last_start = INT64_MIN;
  std::vector<int64_t> open_ends;  // innermost last

  bool takes(int64_t start, int64_t end) const {
    if (start < last_start) return false;
    for (auto it = open_ends.rbegin(); it != open_ends.rend(); ++it)
      if (*it > start) return end <= *it;
    return true;
  }
  void add(int64_t start, int64_t end) {
    while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
    open_ends.push_back(end);
    last_start = start;
  }
};

// A track of the walk: its rank's track, its name and place, and its lanes.
struct RunTrack {
  uint64_t parent;
  int64_t order;
  std::string name;
  std::vector<Lane> lanes;
  LastIid last_event;  // the event name last seen on this track
};

class PerfettoSink : public TraceSink {
 public:
  explicit PerfettoSink(std::ostream& os) : deflater_(os) { chunk_.reserve(kChunkBytes + 4096); }

  void begin(const RunInfo& run) override { run_ = run; }
  void process(int rank, const std::string& name) override {
    uint64_t uuid = next_uuid_++;
    rank_tracks_[rank] = uuid;
    std::string about = "rank " + std::to_string(rank) + " of " + run_.path + "; trace time 0 is " +
                        std::to_string(run_.origin_ns) + " ns on the " + run_.timeline +
                        " timeline";
    descriptor(uuid, 0, name, rank, about, true);
  }
  void track(const TrackInfo& t) override {
    tracks_.push_back({rank_tracks_.at(t.rank), t.order, t.name, {}, {}});
  }
  void slice(const Slice& s) override {
    int64_t end = s.end_ns != kNoTime && s.end_ns > s.start_ns ? s.end_ns : s.start_ns;
    RunTrack& track = tracks_[s.track];
    Lane& lane = lane_for(track, s.start_ns, end);
    lane.add(s.start_ns, end);
    begin_event(s, track.last_event.of(s.name, names_, interned_), lane.uuid);
    end_event(end, lane.uuid);
    if (chunk_.size() >= kChunkBytes) flush_chunk();
  }
  void end() override {
    flush_chunk();
    deflater_.finish();
  }

 private:
  Lane& lane_for(RunTrack& t, int64_t start, int64_t end) {
    for (auto& lane : t.lanes)
      if (lane.takes(start, end)) return lane;
    t.lanes.push_back(Lane{next_uuid_++, INT64_MIN, {}});
    descriptor(t.lanes.back().uuid, t.parent, t.name, t.order, "", false);
    return t.lanes.back();
  }
  // trusted_packet_sequence_id and flags; the first packet clears the state.
  void sequence(proto::Cursor& c, uint64_t flags) {
    c.uint(pb::kSequenceId, kSequence);
    if (!cleared_) flags |= pb::kIncrementalStateCleared;
    cleared_ = true;
    if (flags) c.uint(pb::kSequenceFlags, flags);
  }
  void descriptor(uint64_t uuid, uint64_t parent, const std::string& name, int64_t order,
                  const std::string& about, bool has_children) {
    const std::string name8 = utf8(name), about8 = utf8(about);
    proto::Cursor c(chunk_, kPacketRoom + name8.size() + about8.size());
    size_t packet = c.open(pb::kPacket);
    sequence(c, 0);
    size_t d = c.open(pb::kTrackDescriptor);
    c.uint(pb::kUuid, uuid);
    if (parent) c.uint(pb::kParentUuid, parent);
    c.bytes(pb::kName, name8);
    if (!about8.empty()) c.bytes(pb::kDescription, about8);
    c.sint(pb::kSiblingOrderRank, int32_t(order));
    if (has_children) c.uint(pb::kChildOrdering, pb::kOrderingExplicit);
    c.close(d);
    c.close(packet);
  }
  // `name`: the event name's iid, interned by the caller with the other
  // strings of this event, which go in this packet when new to the sequence.
  void begin_event(const Slice& s, uint64_t name, uint64_t track) {
    uint64_t category = categories_.iid(s.category, interned_);
    size_t args = s.arg_count;
    keys_.resize(args);
    texts_.resize(args);
    for (size_t i = 0; i < args; ++i) {
      uint64_t key = keys_[i] = arg_names_.iid(s.args[i].key, interned_);
      if (!s.args[i].is_text) continue;
      if (last_text_.size() <= key) last_text_.resize(key + 1);
      texts_[i] = last_text_[key].of(s.args[i].text, arg_texts_, interned_);
    }
    proto::Cursor c(chunk_, kPacketRoom + interned_.size() + args * kArgRoom);
    size_t packet = c.open(pb::kPacket);
    c.uint(pb::kTimestamp, uint64_t(s.start_ns - run_.origin_ns));
    sequence(c, pb::kNeedsIncrementalState);
    if (!interned_.empty()) {
      c.bytes(pb::kInternedData, {interned_.data(), interned_.size()});
      interned_.clear();
    }
    size_t event = c.open(pb::kTrackEvent);
    c.uint(pb::kType, pb::kSliceBegin);
    c.uint(pb::kTrackUuid, track);
    c.uint(pb::kCategoryIids, category);
    c.uint(pb::kNameIid, name);
    for (size_t i = 0; i < args; ++i) {
      size_t a = c.open(pb::kDebugAnnotations);
      c.uint(pb::kArgNameIid, keys_[i]);
      if (s.args[i].is_text)
        c.uint(pb::kArgStringValueIid, texts_[i]);
      else
        c.sint(pb::kArgIntValue, s.args[i].number);
      c.close(a);
    }
    c.close(event);
    c.close(packet);
  }
  void end_event(int64_t end, uint64_t track) {
    proto::Cursor c(chunk_, kPacketRoom);
    size_t packet = c.open(pb::kPacket);
    c.uint(pb::kTimestamp, uint64_t(end - run_.origin_ns));
    sequence(c, 0);
    size_t event = c.open(pb::kTrackEvent);
    c.uint(pb::kType, pb::kSliceEnd);
    c.uint(pb::kTrackUuid, track);
    c.close(event);
    c.close(packet);
  }
  void flush_chunk() {
    if (!chunk_.empty()) deflater_.push(chunk_);
  }

  proto::PacketDeflater deflater_;
  RunInfo run_;
  proto::Bytes chunk_, interned_;
  bool cleared_ = false;
  uint64_t next_uuid_ = 1;
  std::map<int, uint64_t> rank_tracks_;
  std::vector<RunTrack> tracks_;
  Interner names_{pb::kInternedNames}, categories_{pb::kInternedCategories},
      arg_names_{pb::kInternedArgNames}, arg_texts_{pb::kInternedArgStrings};
  std::vector<LastIid> last_text_;      // by arg name iid
  std::vector<uint64_t> keys_, texts_;  // the event's arg iids
};

}  // namespace

void write_perfetto_trace(store::RunReader& reader, std::ostream& os, const CollectiveRuns* read,
                          const analysis::CollectiveLabels* labels) {
  PerfettoSink sink(os);
  walk_run(reader, sink, read, labels);
}

}  // namespace ddpscope::reports::trace
