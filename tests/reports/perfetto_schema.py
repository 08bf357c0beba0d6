"""The part of Perfetto's trace schema that ddpscope's trace uses, declared
here from the published .proto files (github.com/google/perfetto, under
protos/perfetto/trace/) and built into message classes at run time by the
`protobuf` package: the test decodes the file with Google's own decoder, not
with anything of ddpscope's.

Only the fields ddpscope writes are declared. A field the writer puts under a
wrong number or wire type is not one of these, so the decoder keeps it as an
unknown field, which the test refuses (`unknown_fields`).
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.unknown_fields import UnknownFieldSet

F = descriptor_pb2.FieldDescriptorProto
UINT64, INT64, INT32, UINT32, STRING, BYTES, MESSAGE, ENUM = (
    F.TYPE_UINT64, F.TYPE_INT64, F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_STRING, F.TYPE_BYTES,
    F.TYPE_MESSAGE, F.TYPE_ENUM)
OPTIONAL, REPEATED = F.LABEL_OPTIONAL, F.LABEL_REPEATED

# message -> [(field, number, type, label, message or enum type)], numbers as
# in the .proto file named in the comment.
MESSAGES = {
    # trace.proto
    "Trace": [("packet", 1, MESSAGE, REPEATED, "TracePacket")],
    # trace_packet.proto
    "TracePacket": [
        ("timestamp", 8, UINT64, OPTIONAL, None),
        ("trusted_packet_sequence_id", 10, UINT32, OPTIONAL, None),
        ("track_event", 11, MESSAGE, OPTIONAL, "TrackEvent"),
        ("interned_data", 12, MESSAGE, OPTIONAL, "InternedData"),
        ("sequence_flags", 13, UINT32, OPTIONAL, None),
        ("compressed_packets", 50, BYTES, OPTIONAL, None),
        ("track_descriptor", 60, MESSAGE, OPTIONAL, "TrackDescriptor"),
    ],
    # track_event/track_descriptor.proto
    "TrackDescriptor": [
        ("uuid", 1, UINT64, OPTIONAL, None),
        ("name", 2, STRING, OPTIONAL, None),
        ("parent_uuid", 5, UINT64, OPTIONAL, None),
        ("child_ordering", 11, ENUM, OPTIONAL, "TrackDescriptor.ChildTracksOrdering"),
        ("sibling_order_rank", 12, INT32, OPTIONAL, None),
        ("description", 14, STRING, OPTIONAL, None),
    ],
    # track_event/track_event.proto
    "TrackEvent": [
        ("category_iids", 3, UINT64, REPEATED, None),
        ("debug_annotations", 4, MESSAGE, REPEATED, "DebugAnnotation"),
        ("type", 9, ENUM, OPTIONAL, "TrackEvent.Type"),
        ("name_iid", 10, UINT64, OPTIONAL, None),
        ("track_uuid", 11, UINT64, OPTIONAL, None),
    ],
    # track_event/debug_annotation.proto
    "DebugAnnotation": [
        ("name_iid", 1, UINT64, OPTIONAL, None),
        ("int_value", 4, INT64, OPTIONAL, None),
        ("string_value_iid", 17, UINT64, OPTIONAL, None),
    ],
    # interned_data/interned_data.proto
    "InternedData": [
        ("event_categories", 1, MESSAGE, REPEATED, "EventCategory"),
        ("event_names", 2, MESSAGE, REPEATED, "EventName"),
        ("debug_annotation_names", 3, MESSAGE, REPEATED, "DebugAnnotationName"),
        ("debug_annotation_string_values", 29, MESSAGE, REPEATED, "InternedString"),
    ],
    # track_event/track_event.proto
    "EventCategory": [("iid", 1, UINT64, OPTIONAL, None), ("name", 2, STRING, OPTIONAL, None)],
    "EventName": [("iid", 1, UINT64, OPTIONAL, None), ("name", 2, STRING, OPTIONAL, None)],
    # track_event/debug_annotation.proto
    "DebugAnnotationName": [("iid", 1, UINT64, OPTIONAL, None),
                            ("name", 2, STRING, OPTIONAL, None)],
    # profiling/profile_common.proto
    "InternedString": [("iid", 1, UINT64, OPTIONAL, None), ("str", 2, BYTES, OPTIONAL, None)],
}

# (message, enum) -> values, as in the same files.
ENUMS = {
    ("TrackEvent", "Type"): {"TYPE_UNSPECIFIED": 0, "TYPE_SLICE_BEGIN": 1, "TYPE_SLICE_END": 2,
                             "TYPE_INSTANT": 3, "TYPE_COUNTER": 4},
    ("TrackDescriptor", "ChildTracksOrdering"): {"UNKNOWN": 0, "LEXICOGRAPHIC": 1,
                                                 "CHRONOLOGICAL": 2, "EXPLICIT": 3},
}

# TracePacket.SequenceFlags
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2


def _file_descriptor():
    fd = descriptor_pb2.FileDescriptorProto(
        name="ddpscope_test/perfetto_subset.proto", package="perfetto.protos", syntax="proto2")
    for name, fields in MESSAGES.items():
        msg = fd.message_type.add(name=name)
        for field, number, ftype, label, type_name in fields:
            f = msg.field.add(name=field, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = ".perfetto.protos." + type_name
        for (owner, enum), values in ENUMS.items():
            if owner != name:
                continue
            e = msg.enum_type.add(name=enum)
            for value_name, value in values.items():
                e.value.add(name=value_name, number=value)
    return fd


_pool = descriptor_pool.DescriptorPool()
_pool.Add(_file_descriptor())
Trace, TrackEvent, TrackDescriptor = (
    message_factory.GetMessageClass(_pool.FindMessageTypeByName("perfetto.protos." + name))
    for name in ("Trace", "TrackEvent", "TrackDescriptor"))


def unknown_fields(message, path="packet"):
    """Paths of fields in `message` (recursively) that the schema above does
    not declare with that number and wire type."""
    found = [f"{path}: field {f.field_number} (wire type {f.wire_type})"
             for f in UnknownFieldSet(message)]
    for field, value in message.ListFields():
        if field.type != F.TYPE_MESSAGE:
            continue
        values = value if field.is_repeated else [value]
        for v in values:
            found += unknown_fields(v, f"{path}.{field.name}")
    return found
