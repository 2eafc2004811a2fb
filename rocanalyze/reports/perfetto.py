"""trace.pftrace: the GPU activity per stream, per-category busy tracks and recommendation markers.

Written with the perfetto package's TraceProtoBuilder; ui.perfetto.dev opens it. Kernel slices
come from the EventTable (every GPU activity, names interned); the category counters, steps and
markers come from the Analysis, whose times (µs) are on the same clock as the table's `start_ns`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

from rocanalyze.analysis.kernels import display_name
from rocanalyze.analysis.result import Analysis
from rocanalyze.reports import text

if TYPE_CHECKING:
    from rocanalyze.traces.schema import EventTable

SEQ = 1  # one trusted packet sequence for the whole file
_ROOT, _CATS, _MARKS, _STEPS = 1, 2, 3, 4  # fixed track uuids; streams and categories count up from 100


def render(analysis: Analysis, table: EventTable | None = None) -> bytes:
    """The Perfetto trace (bytes): GPU slices from `table` when given, tracks from `analysis`."""
    b = _Writer()
    b.track(_ROOT, f"rocanalyze: {text.title(analysis).split(': ', 1)[-1]}")
    if table is not None and len(table.gpu):
        b.gpu_activity(table)
    b.categories(analysis)
    b.steps(analysis)
    b.markers(analysis)
    return b.builder.serialize()


class _Writer:
    def __init__(self) -> None:
        self.builder = TraceProtoBuilder()
        self.next_uuid = 100
        self.names: dict[str, int] = {}
        first = self.builder.add_packet()
        first.trusted_packet_sequence_id = SEQ
        first.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        first.trace_packet_defaults.timestamp_clock_id = 6  # BUILTIN_CLOCK_BOOTTIME

    def packet(self) -> TracePacket:
        p = self.builder.add_packet()
        p.trusted_packet_sequence_id = SEQ
        return p

    def track(self, uuid: int, name: str, parent: int | None = None, counter_unit: str | None = None) -> int:
        p = self.packet()
        p.track_descriptor.uuid = uuid
        p.track_descriptor.name = name
        if parent is not None:
            p.track_descriptor.parent_uuid = parent
        if counter_unit is not None:
            p.track_descriptor.counter.unit_name = counter_unit
        return uuid

    def new_track(self, name: str, parent: int, counter_unit: str | None = None) -> int:
        self.next_uuid += 1
        return self.track(self.next_uuid, name, parent, counter_unit)

    def slice(self, track: int, ts_ns: int, dur_ns: int, name: str, category: str = "",
              args: dict[str, Any] | None = None) -> None:
        begin = self.packet()
        begin.timestamp = max(0, ts_ns)
        ev = begin.track_event
        ev.type = TrackEvent.TYPE_SLICE_BEGIN
        ev.track_uuid = track
        self._name(begin, name)
        if category:
            ev.categories.append(category)
        for key, value in (args or {}).items():
            ann = ev.debug_annotations.add()
            ann.name = key
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                ann.double_value = float(value)
            else:
                ann.string_value = str(value)
        end = self.packet()
        end.timestamp = max(0, ts_ns + max(dur_ns, 1))
        end.track_event.type = TrackEvent.TYPE_SLICE_END
        end.track_event.track_uuid = track

    def _name(self, packet: TracePacket, name: str) -> None:
        """Intern event names: a kernel name is sent once, then referred to by id."""
        iid = self.names.get(name)
        if iid is None:
            iid = self.names[name] = len(self.names) + 1
            entry = packet.interned_data.event_names.add()
            entry.iid = iid
            entry.name = display_name(name) or name  # a kernel recorded by its mangled symbol reads demangled
        packet.sequence_flags = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
        packet.track_event.name_iid = iid

    def gpu_activity(self, table: EventTable) -> None:
        """One track per (rank, device, stream), one slice per kernel, copy or memset."""
        gpu = table.gpu.sort_values(["rank", "device", "stream", "start_ns"], kind="stable")
        cols = [gpu[c].to_numpy() for c in ("rank", "device", "stream", "start_ns", "dur_ns")]
        names, cats, kinds = gpu["name"].astype(str).to_numpy(), gpu["category"].astype(str).to_numpy(), \
            gpu["kind"].astype(str).to_numpy()
        tracks: dict[tuple[int, int], int] = {}
        streams: dict[tuple[int, int, int], int] = {}
        for i in range(len(gpu)):
            rank, dev, stream = int(cols[0][i]), int(cols[1][i]), int(cols[2][i])
            if (rank, dev) not in tracks:
                tracks[(rank, dev)] = self.new_track(f"rank {rank} GPU {dev}", _ROOT)
            key = (rank, dev, stream)
            if key not in streams:
                streams[key] = self.new_track(f"stream {stream}", tracks[(rank, dev)])
            self.slice(streams[key], int(cols[3][i]), int(cols[4][i]), names[i], cats[i] or kinds[i])

    def categories(self, a: Analysis) -> None:
        """Per-category busy share of each timeline bin (all lanes summed), as counter tracks."""
        tl = a.timeline
        if not tl.get("lanes") or not tl.get("bin_us"):
            return
        self.track(_CATS, "GPU busy by category (share of one stream-bin)", _ROOT)
        start, width, n = float(tl.get("start_us") or 0.0), float(tl["bin_us"]), int(tl["n_bins"])
        totals: dict[str, list[float]] = {}
        for lane in tl["lanes"]:
            for cat, values in (lane.get("busy_us_by_category") or {}).items():
                acc = totals.setdefault(cat, [0.0] * n)
                for i, v in enumerate(values[:n]):
                    acc[i] += float(v)
        for cat in sorted(totals):
            track = self.new_track(cat, _CATS, counter_unit="busy %")
            for i, v in enumerate(totals[cat]):
                p = self.packet()
                p.timestamp = int((start + i * width) * 1000)
                p.track_event.type = TrackEvent.TYPE_COUNTER
                p.track_event.track_uuid = track
                p.track_event.double_counter_value = 100.0 * v / width

    def steps(self, a: Analysis) -> None:
        if not a.steps:
            return
        self.track(_STEPS, "steps", _ROOT)
        for s in a.steps:
            self.slice(_STEPS, int(float(s["start_us"]) * 1000), int(float(s["dur_us"]) * 1000),
                       str(s["name"]), "step", {"busy_us": s.get("busy_us") or 0.0})

    def markers(self, a: Analysis) -> None:
        """Each recommendation as an instant at the window start, with its evidence and action."""
        if not a.recommendations:
            return
        self.track(_MARKS, "recommendations", _ROOT)
        ts = int(float(a.window.get("start_us") or 0.0) * 1000)
        for r in a.recommendations:
            p = self.packet()
            p.timestamp = ts
            p.track_event.type = TrackEvent.TYPE_INSTANT
            p.track_event.track_uuid = _MARKS
            self._name(p, f"[{text.level_name(r['level'])}] {r['title']}")
            p.track_event.categories.append("recommendation")
            for key in ("id", "evidence", "action", "seed", "saving_us"):
                ann = p.track_event.debug_annotations.add()
                ann.name = key
                ann.string_value = str(r.get(key, ""))
