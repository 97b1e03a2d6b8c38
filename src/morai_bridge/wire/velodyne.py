"""MORAI SIM 3D LiDAR over UDP: Velodyne-format 1206-byte data packets, with numpy.

MORAI's 3D LiDAR sends the data packets of a real Velodyne sensor, one per UDP
datagram, so that Velodyne tools can read them.  Facts and confidence tags
([C] confirmed, [S] single source, [I] inferred, [?] unknown) refer to
``shared/spec/sensors.md`` section 3; the ros-drivers/velodyne conventions
(ROSVEL) are followed where MORAI's own sources are silent.

Packet (1206 bytes, little-endian) [C]
--------------------------------------
12 blocks of 100 bytes: flag ``FF EE`` (HDL-64 lower bank ``FF DD``), uint16
azimuth in 0.01 deg, 32 x (uint16 distance, uint8 intensity); then uint32
timestamp (us past the hour), return-mode byte (0x37 strongest, 0x38 last,
0x39 dual) and product-id byte.

Models (:data:`MODELS`, data not code)
--------------------------------------
``VLP16`` [C], ``PUCK_HIRES`` (VLP-16 Hi-Res) [C], ``HDL32E`` [C] (the two MORAI
is known to emulate), ``VLP32C`` [S] (4 mm distance unit, per-laser azimuth
offsets; not evidenced for MORAI), ``MORAI_64`` [S]/[I]: MORAI's idealised
HDL-64E S3 table (ROSNM ``64e_s3-xiesc.yaml``), upper bank ``FF EE`` = lasers
0-31, lower bank ``FF DD`` = lasers 32-63.  Its ``vert_offset_correction``
values (0.14-0.22 m) are NOT applied (0 here): MORAI's idealised table is used
as pure angles; every model has a ``vert_offsets`` column should they matter.
Rings are numbered by ascending elevation, as ROSVEL does.

Firing times within a packet: VLP-16 / Hi-Res 55.296 us per firing, 2.304 us per
laser [C]; HDL-32E 46.08 us per firing, 1.152 us per laser in data order (HDL-32E
manual; ROSVEL uses laser pairs, a difference of at most 18 us); VLP-32C
55.296 us, laser pairs 2.304 us apart [S]; 64: 57.6 us per upper/lower column
and the HDL-64E S3 manual's firing pattern (7.2 us per 4 lasers) [S] (ROSVEL has
no timing for 64-laser models).  MORAI's real timing is unknown [?].

Open questions made parameters (spec 3.2, 8 q5)
----------------------------------------------
* Bytes 1200-1205 [?]: the model is configured, never taken from the product
  byte.  ``return_mode='auto'`` reads byte 1204 of the batch's first packet
  (0x39 = dual, anything else single); ``'single'``/``'dual'`` force it.
* Point times: ``'snapshot'``: every point at time 0 (one capture instant).
  ``packet_time='auto'`` uses the packets' device timestamps when
  each one is 1 us..100 ms after the previous one, otherwise nominal times
  (packet index x the model's packet period: a simulator may send a revolution
  in a burst, so arrival times are not used unless asked for); ``'device'``,
  ``'nominal'`` and ``'host'`` (caller-supplied arrival stamps, as ROSVEL
  without gps_time; nominal when none are given) force one.  A point's ``time``
  is the seconds from the first firing of the batch's first packet (ROSVEL: from
  the scan's first packet stamp) to its own firing.
* Second firing of a VLP-16 block (azimuth not transmitted):
  ``interpolation='velodyne'`` (default, ROSVEL / manual: azimuth +
  delta x slot time / 110.592 us, delta = next block's azimuth - this one mod
  36000, the last block reusing the previous delta, per packet) or ``'fixed'``
  (MORAI's examples: +``second_firing_offset_deg`` = 0.2 deg for the second
  firing, no per-laser shift).  ROSVEL rounds the corrected azimuth to 0.01 deg;
  we do not (<= 0.005 deg difference).  32-laser-per-block models use the block
  azimuth (+ per-laser offset) for every laser, as ROSVEL does.
* Dual return: blocks 2j (last) and 2j+1 (strongest) share an azimuth [C].
  Both returns are kept, except that a return of block 2j+1 identical
  (distance and intensity) to block 2j's is dropped (``dual_dedupe=True``,
  as a real sensor repeats the block when there is one return).  Dual is not
  supported for ``MORAI_64`` (always decoded as single).
* Distance 0 = no return: dropped by default; ``keep_zero=True`` keeps such
  points with NaN x, y, z (as ROSVEL's organised cloud does).  ``min_range`` /
  ``max_range`` (m) drop points outside, off by default.
* Auxiliary header [S] (third-party claim, unverified): with
  ``aux_header=True`` (default) a datagram longer than 1206 bytes whose payload
  starts at a ``FF EE`` within its first 64 bytes is accepted and counted.
* Revolutions: no packet marks them [I].  :class:`RevolutionAssembler` starts a
  new revolution at the packet whose first-block azimuth wraps (drops by more
  than 180 deg) or passes ``cut_angle``, and emits it already at its own last
  packet when that one predicts the crossing (cut within half a block step
  after its last block).  MORAI 25.S4 sends each revolution as one burst of
  back-to-back packets [S] (eriverOoO/heven-ad-2026 reverse-engineering
  report, section 7.2): bursts are detected from arrival times and a burst
  that covers 360 deg is one revolution, emitted at its last packet and, with
  ``packet_time='auto'``, given snapshot point times (every time 0).  The
  rules: :class:`RevolutionAssembler`, docs/sensors.md.

Coordinates: ROS frame as ROSVEL (x forward, y left, z up):
x = R cos(w) cos(a), y = -R cos(w) sin(a), z = R sin(w), with w the elevation
and a the azimuth (+ per-laser offset) [C].

Output cloud: :func:`pack_cloud` gives the ``data`` bytes and field list of
ROSVEL's XYZIRT cloud (x, y, z, intensity float32 at 0, 4, 8, 12; ring uint16
at 16; time float32 at 18; point_step 22, little-endian, height 1).

Ports [C] spec 7: user-set; MORAI's WeGo and SensorExample use destination 2368
(:data:`DEFAULT_PORT`, also Velodyne's own default).

Public API
----------
``MODELS``, ``get_model(name)``, ``model_from_product_id(byte)``
``VelodyneDecoder(model='VLP16', return_mode='auto', interpolation='velodyne',
second_firing_offset_deg=0.2, dual_dedupe=True, keep_zero=False,
min_range=None, max_range=None, packet_time='auto', aux_header=True)``
    ``.check(datagram) -> bytes`` (the 1206-byte packet), ``.decode(packets,
    stamps=None, packet_time=None) -> Points``
``decode_packets(packets, model='VLP16', stamps=None, **options) -> Points``
``RevolutionAssembler(decoder, cut_angle=None, max_packets=4000, burst='auto',
burst_gap=0.02, snapshot_bursts=True)``
    ``.add(datagram, stamp=None, arrival=None) -> Revolution | None``,
    ``.flush()``, ``.counters()``, ``.bursty``, ``.last_error``
``pack_cloud(points) -> CloudData``; ``POINT_FIELDS``, ``POINT_STEP``
``encode_packets(model, azimuths_deg, distances_m, intensities=None,
timestamps_us=None, return_mode=RETURN_STRONGEST, product_id=None, flags=None) -> [bytes]``
``packets_from_ranges(model, ranges_m, intensities=None, rpm=600.0,
start_azimuth_deg=0.0, start_time_us=0, last_ranges_m=None, last_intensities=None,
return_mode=RETURN_STRONGEST) -> [bytes]``
``scan_pattern(model, rpm=600.0, start_azimuth_deg=0.0, columns=None)
-> (azimuth_deg, elevation_deg)``

Decoders raise only :class:`SensorDecodeError` for bad packets; encoders
:class:`EncodeError`.  No ROS imports.
"""

import math
import struct
import threading
from collections import Counter
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .sensor_errors import EncodeError, SensorDecodeError, check_bytes
from .velodyne_models import (AUX_HEADER_SEARCH, BLOCKS, DEFAULT_PORT, HOUR_US, LOWER_BANK, MODELS,  # noqa: F401
                              PACKET_SIZE, RETURN_DUAL, RETURN_LAST, RETURN_STRONGEST, SLOTS, UPPER_BANK,
                              PACKET_DTYPE, VelodyneModel, _AUTO_STEP_MAX_US, _AZ_MAX, get_model,
                              model_from_product_id)

__all__ = [
    "DEFAULT_PORT", "PACKET_SIZE", "BLOCKS", "SLOTS", "UPPER_BANK", "LOWER_BANK",
    "RETURN_STRONGEST", "RETURN_LAST", "RETURN_DUAL", "HOUR_US", "AUX_HEADER_SEARCH",
    "VelodyneModel", "MODELS", "get_model", "model_from_product_id", "PACKET_DTYPE",
    "Points", "Revolution", "VelodyneDecoder", "decode_packets", "RevolutionAssembler", "PACKET_TIMES",
    "PointField", "POINT_FIELDS", "POINT_STEP", "CloudData", "pack_cloud",
    "encode_packets", "packets_from_ranges", "scan_pattern", "firing_step_deg",
    "SensorDecodeError", "EncodeError",
]

_AZIMUTHS = struct.Struct("<" + "2xH96x" * BLOCKS)
#: point-time modes of :class:`VelodyneDecoder` (module docstring)
PACKET_TIMES = ("auto", "device", "nominal", "host", "snapshot")
_FLAG_FF = b"\xff" * BLOCKS
_FLAG_EE = b"\xee" * BLOCKS


class Points:
    """Decoded points, one numpy array per field (all of the same length).

    x, y, z: float32 m, ROS frame.  intensity: float32 (the raw byte, 0..255).
    ring: uint16 (0 = lowest laser).  time: float32 s since the first firing of
    the first packet decoded together.  Arrays from the decoder are contiguous
    views of one allocation per call (owned by the caller, never reused).
    """

    __slots__ = ("x", "y", "z", "intensity", "ring", "time")

    def __init__(self, x, y, z, intensity, ring, time):
        self.x, self.y, self.z = x, y, z
        self.intensity, self.ring, self.time = intensity, ring, time

    def __len__(self) -> int:
        return len(self.x)

    def __repr__(self) -> str:
        return "Points(%d points)" % len(self.x)

    @classmethod
    def empty(cls) -> "Points":
        f = np.empty(0, np.float32)
        return cls(f, f.copy(), f.copy(), f.copy(), np.empty(0, np.uint16), f.copy())


class Revolution(NamedTuple):
    """One revolution from :class:`RevolutionAssembler`.

    points: :class:`Points`.  packets: packets it was decoded from.
    complete: False for a revolution that did not start at the cut (the first
    one, one cut by ``max_packets``, or a flush).  stamp: the caller's stamp of its
    first packet (None if not given).  device_time_us: timestamp field of its
    first packet.  first_azimuth_deg: first block azimuth of its first packet.
    dual: decoded as dual return.  predicted: closed at its own last packet
    (predictive or burst cut), not when the next packet passed the cut.  burst:
    the sender was taken to be bursty.  snapshot: decoded with snapshot point
    times (every time 0).
    """

    points: Points
    packets: int
    complete: bool
    stamp: Optional[float]
    device_time_us: int
    first_azimuth_deg: float
    dual: bool
    predicted: bool = False
    burst: bool = False
    snapshot: bool = False


class VelodyneDecoder:
    """Vectorised decoder of Velodyne data packets for one model (module docstring
    for every option).  Keeps scratch buffers per thread between calls (about 50
    bytes per point slot, e.g. 3.5 MB for an HDL-32E revolution); otherwise
    stateless: safe to share between threads."""

    def __init__(self, model="VLP16", return_mode: str = "auto", interpolation: str = "velodyne",
                 second_firing_offset_deg: float = 0.2, dual_dedupe: bool = True,
                 keep_zero: bool = False, min_range: Optional[float] = None,
                 max_range: Optional[float] = None, packet_time: str = "auto",
                 aux_header: bool = True):
        self.model = m = get_model(model)
        if return_mode not in ("auto", "single", "dual"):
            raise ValueError("return_mode must be 'auto', 'single' or 'dual'")
        if interpolation not in ("velodyne", "fixed"):
            raise ValueError("interpolation must be 'velodyne' or 'fixed'")
        if packet_time not in PACKET_TIMES:
            raise ValueError("packet_time must be one of %s" % ", ".join(map(repr, PACKET_TIMES)))
        self.return_mode = return_mode
        self.interpolation = interpolation
        self.second_firing_offset_deg = float(second_firing_offset_deg)
        self.dual_dedupe = bool(dual_dedupe)
        self.keep_zero = bool(keep_zero)
        self.min_range = min_range
        self.max_range = max_range
        self.packet_time = packet_time
        self.aux_header = bool(aux_header)
        self._local = threading.local()
        res = m.distance_resolution_m
        # range limits as distance counts (inclusive), None when off
        self._lo = None if min_range is None else max(1, int(math.ceil(min_range / res - 1e-9)))
        self._hi = None if max_range is None else int(math.floor(max_range / res + 1e-9))

        k = np.arange(SLOTS)
        lasers_per_firing = SLOTS // m.firings_per_block
        self._banked = m.blocks_per_firing == 2
        slot_laser = k % lasers_per_firing
        elev = np.radians(np.asarray(m.elevations_deg, np.float64))
        vo = np.asarray(m.vert_offsets_m, np.float64)
        # per-laser tables (64 entries for the banked model, indexed by laser), else per slot
        lasers = np.arange(m.lasers) if self._banked else slot_laser
        self._cos_el = np.cos(elev[lasers]).astype(np.float32)
        self._sin_el = np.sin(elev[lasers]).astype(np.float32)
        self._vert = vo[lasers].astype(np.float32) if np.any(vo) else None
        self._ring = np.asarray(m.rings, np.uint16)[lasers]
        off = np.radians(np.asarray(m.azimuth_offsets_deg, np.float64))[lasers]
        self._az_off_rad = off.astype(np.float32) if np.any(off) else None
        slot_us = np.asarray(m.slot_times_us, np.float64)
        self._slot_time = (slot_us * 1e-6).astype(np.float32)
        # azimuth shift of each slot, in units of the block-to-block azimuth delta
        block_us = m.firings_per_block * m.firing_period_us
        self._frac = (slot_us / block_us).astype(np.float32)
        self._fixed_rad = np.radians((k // lasers_per_firing) * self.second_firing_offset_deg
                                     ).astype(np.float32)
        b = np.arange(BLOCKS)
        self._block_time = {}
        for dual in (False, True):
            group = m.blocks_per_firing * (2 if dual else 1)
            cols = (b // group) * m.firings_per_block
            self._block_time[dual] = cols * m.firing_period_us * 1e-6

    # ------------------------------------------------------------------ one datagram

    def check(self, datagram) -> bytes:
        """The 1206-byte packet of a datagram, validated (length, block flags,
        azimuths < 36000); raises :class:`SensorDecodeError` with ``reason``
        'length', 'flag' or 'azimuth'.  A longer datagram is accepted as described
        under ``aux_header`` (its ``reason`` on failure is still 'length')."""
        data = check_bytes(datagram)
        n = len(data)
        if n != PACKET_SIZE:
            if self.aux_header and n > PACKET_SIZE:
                start = 0
                while True:
                    off = data.find(b"\xff\xee", start, AUX_HEADER_SEARCH + 1)
                    if off < 0 or off + PACKET_SIZE > n:
                        break
                    candidate = data[off:off + PACKET_SIZE]
                    if (self._flags_ok(candidate)
                            and max(_AZIMUTHS.unpack(candidate[:1200])) < _AZ_MAX):
                        return candidate
                    start = off + 1
            raise SensorDecodeError(
                "Velodyne datagram of %d bytes, expected %d%s" % (
                    n, PACKET_SIZE, " (or longer with a FF EE payload start in its first %d bytes)"
                    % AUX_HEADER_SEARCH if self.aux_header else ""),
                "length", length=n, expected=(PACKET_SIZE,), header=data[:2])
        if not self._flags_ok(data):
            raise SensorDecodeError(
                "Velodyne packet with bad block flags %s, expected FF EE%s" % (
                    " ".join(data[b * 100:b * 100 + 2].hex() for b in range(BLOCKS)),
                    " or FF DD" if self._banked else ""), "flag", length=n, header=data[:2])
        azimuths = _AZIMUTHS.unpack(data[:1200])
        if max(azimuths) >= _AZ_MAX:
            raise SensorDecodeError("Velodyne packet with block azimuth %d (0.01 deg) >= 36000"
                                    % max(azimuths), "azimuth", length=n)
        return data

    def _flags_ok(self, packet: bytes) -> bool:
        if packet[0:1200:100] != _FLAG_FF:
            return False
        second = packet[1:1200:100]
        if self._banked:
            return not second.translate(None, b"\xee\xdd")
        return second == _FLAG_EE

    # ------------------------------------------------------------------ many packets

    def _records(self, packets) -> np.ndarray:
        if isinstance(packets, np.ndarray):
            arr = packets
            if arr.dtype == PACKET_DTYPE:
                return np.ascontiguousarray(arr.reshape(-1))
            if arr.dtype != np.uint8 or arr.ndim != 2 or arr.shape[1] != PACKET_SIZE:
                raise SensorDecodeError("packet array must be uint8 of shape (N, %d), got %s %s"
                                        % (PACKET_SIZE, arr.dtype, arr.shape), "length")
            return np.ascontiguousarray(arr).view(PACKET_DTYPE).reshape(-1)
        packets = list(packets)
        if any(n != PACKET_SIZE for n in set(map(len, packets))):
            i, p = next((i, p) for i, p in enumerate(packets) if len(p) != PACKET_SIZE)
            raise SensorDecodeError("packet %d has %d bytes, expected %d"
                                    % (i, len(p), PACKET_SIZE), "length", length=len(p),
                                    expected=(PACKET_SIZE,))
        return np.frombuffer(b"".join(packets), dtype=PACKET_DTYPE)

    def is_dual(self, rec: np.ndarray) -> bool:
        """Whether packets (``PACKET_DTYPE`` records) are decoded as dual return."""
        if not self.model.dual_supported or self.return_mode == "single":
            return False
        if self.return_mode == "dual":
            return True
        return len(rec) > 0 and int(rec["mode"][0]) == RETURN_DUAL

    def _packet_times(self, rec: np.ndarray, dual: bool, stamps, mode: str) -> np.ndarray:
        """Time (s) of each packet's first firing after the first packet's."""
        n = len(rec)
        if mode == "host" and stamps is not None:
            t = np.asarray(stamps, np.float64).reshape(-1)
            if len(t) != n:
                raise ValueError("%d stamps for %d packets" % (len(t), n))
            return t - t[0]
        if mode in ("auto", "device") and n > 1:
            dev = rec["stamp"].astype(np.int64)
            step = dev[1:] - dev[:-1]
            step %= HOUR_US
            if mode == "device" or (step.min() > 0 and step.max() <= _AUTO_STEP_MAX_US):
                rel = np.zeros(n)
                step.cumsum(out=rel[1:])
                rel *= 1e-6
                return rel
        return np.arange(n) * (self.model.packet_period_us(dual) * 1e-6)

    def decode(self, packets, stamps: Optional[Sequence[float]] = None,
               packet_time: Optional[str] = None) -> Points:
        """Decode packets together.

        ``packets``: a sequence of 1206-byte ``bytes``, an (N, 1206) uint8 array or
        an array of ``PACKET_DTYPE``.  ``stamps``: optional arrival time (s) per
        packet, used for point times when ``packet_time='host'``.  ``packet_time``:
        this call's point-time mode instead of the decoder's (e.g. ``'snapshot'``:
        every time 0).  Points come in packet, block, slot order.  Raises
        :class:`SensorDecodeError` if any packet is invalid (filter single datagrams
        with :meth:`check` first).
        """
        if packet_time is None:
            packet_time = self.packet_time
        elif packet_time not in PACKET_TIMES:
            raise ValueError("packet_time must be one of %s" % ", ".join(map(repr, PACKET_TIMES)))
        rec = self._records(packets)
        n = len(rec)
        if n == 0:
            return Points.empty()
        m = self.model
        blocks = rec["blocks"]
        flags = blocks["flag"]
        if self._banked:
            ok = (flags == UPPER_BANK) | (flags == LOWER_BANK)
        else:
            ok = flags == UPPER_BANK
        if not ok.all():
            raise SensorDecodeError("packet %d has bad block flags"
                                    % int(np.flatnonzero(~ok.all(axis=1))[0]), "flag",
                                    length=PACKET_SIZE)
        az = blocks["azimuth"]
        if int(az.max()) >= _AZ_MAX:
            raise SensorDecodeError("packet %d has a block azimuth >= 36000"
                                    % int(np.flatnonzero(np.any(az >= _AZ_MAX, axis=1))[0]),
                                    "azimuth", length=PACKET_SIZE)
        dual = self.is_dual(rec)
        size = n * BLOCKS * SLOTS
        ws = self._workspace(n)

        # Plan: find the slots with a return first, then compute only for them.
        # Intermediates live in buffers reused between calls (fresh memory costs a
        # page fault per 4 kB); only the six output arrays are new.
        # One strided read: the little-endian uint32 at each 3-byte return holds the
        # distance (low 16 bits) and the intensity (bits 16-23); the last one reads
        # one byte past its block, still inside the packet.
        words = ws.words[:size]
        words.reshape(n, BLOCKS, SLOTS)[...] = np.ndarray((n, BLOCKS, SLOTS), "<u4", rec, 4,
                                                         (PACKET_SIZE, 100, 3))
        dist = ws.dist[:size]
        dist[...] = words                                      # low 16 bits (unsafe cast)

        valid = None
        if not self.keep_zero:
            valid = np.not_equal(dist, 0, out=ws.valid[:size])
        for inside in ((dist >= self._lo) if self._lo is not None else None,
                       (dist <= self._hi) if self._hi is not None else None):
            if inside is not None:
                valid = inside if valid is None else np.logical_and(valid, inside, out=valid)
        if dual and self.dual_dedupe:
            grid = words.reshape(n, BLOCKS, SLOTS)
            same = (grid[:, 1::2] & 0xFFFFFF) == (grid[:, 0::2] & 0xFFFFFF)   # distance, intensity
            if valid is None:
                valid = np.ones(size, bool)
            valid.reshape(n, BLOCKS, SLOTS)[:, 1::2] &= ~same
        idx = ws.arange[:size] if valid is None else valid.nonzero()[0]
        k = len(idx)

        wsd = ws.__dict__

        def buf(name):
            return wsd[name][:k]

        # mode "wrap": every index is in range by construction (slot < 32, block < 12 n, ...), and
        # numpy's take is ~20 % faster in this mode than in "clip" or "raise" (numpy 1.24); the
        # ndarray method skips np.take's dispatch layers (~2 us a call)
        def take(table, index, name=None):
            return table.take(index, None, None if name is None else buf(name), "wrap")

        slot = np.bitwise_and(idx, SLOTS - 1, out=buf("slot"))
        # packet * 12 + block (a shift of uint64 is faster than one of int64 in numpy 1.24)
        blk = buf("blk")
        np.right_shift(idx.view(np.uint64), np.uint64(5), out=blk.view(np.uint64))
        wk = take(words, idx, "wk")
        wk_bytes = wk.view(np.uint8)
        dk = np.bitwise_and(wk, 0xFFFF, out=buf("dk"))         # distance counts
        d = np.multiply(dk, np.float32(m.distance_resolution_m), out=buf("d"), dtype=np.float32)

        if self._banked:       # laser number: slot, + 32 in a lower-bank block
            lower = (flags == LOWER_BANK).reshape(-1).view(np.uint8)
            laser = np.left_shift(take(lower, blk, "lk"), 5, out=buf("laser"), dtype=np.intp,
                                  casting="unsafe")
            laser += slot
        else:
            laser = slot

        # azimuth (rad) and its cosine and sine
        to_rad = np.float32(math.pi / 18000.0)
        azr = az.astype(np.float32)
        azr *= to_rad
        if m.interpolate or self._az_off_rad is not None:
            a = take(azr.reshape(-1), blk, "a")
            if m.interpolate and self.interpolation == "velodyne":
                head = az[:, 0::2] if dual else az        # one azimuth per block (pair)
                step = np.subtract(head[:, 1:], head[:, :-1], dtype=np.int32)
                np.remainder(step, _AZ_MAX, out=step)
                delta = np.empty(head.shape, np.float32)
                np.multiply(step, to_rad, out=delta[:, :-1], dtype=np.float32)
                delta[:, -1] = delta[:, -2]
                if dual:
                    delta = np.repeat(delta, 2, axis=1)
                shift = take(delta.reshape(-1), blk, "b")
                shift *= take(self._frac, slot, "c")
                a += shift
            elif m.interpolate:
                a += take(self._fixed_rad, slot, "b")
            if self._az_off_rad is not None:
                a += take(self._az_off_rad, laser, "b")
            cos_a = np.cos(a, out=buf("b"))           # separate buffers: see _Workspace
            sin_a = np.sin(a, out=buf("c"))
        else:
            # every laser of a block at the block azimuth: trigonometry per block only
            cos_a = take(np.cos(azr).reshape(-1), blk, "b")
            sin_a = take(np.sin(azr).reshape(-1), blk, "c")

        # the outputs: one new block of memory, one contiguous run per field
        x, y, z, time, intensity, ring = _output_arrays(k)
        cos_el = take(self._cos_el, laser, "e")
        sin_el = take(self._sin_el, laser, "f")
        if self._vert is None:
            xy = np.multiply(d, cos_el, out=buf("a"))
            np.multiply(d, sin_el, out=z)
        else:
            vo = take(self._vert, laser)
            xy = np.subtract(d * cos_el, vo * sin_el, out=buf("a"))
            np.add(d * sin_el, vo * cos_el, out=z)
        np.multiply(xy, cos_a, out=x)
        np.multiply(xy, sin_a, out=y)
        np.negative(y, out=y)
        if self.keep_zero:
            zero = dk == 0
            if zero.any():
                x[zero] = np.nan
                y[zero] = np.nan
                z[zero] = np.nan

        if packet_time == "snapshot":
            time.fill(0.0)
        else:
            packet_t = self._packet_times(rec, dual, stamps, packet_time)
            block_t = (packet_t[:, None] + self._block_time[dual][None, :]).astype(np.float32)
            block_t.reshape(-1).take(blk, None, time, "wrap")
            time += take(self._slot_time, slot, "e")
        self._ring.take(laser, None, ring, "wrap")
        intensity[...] = wk_bytes[2::4]
        return Points(x, y, z, intensity, ring, time)

    def _workspace(self, n: int) -> "_Workspace":
        """Reused per-thread buffers for grids of up to ``n`` packets."""
        ws = getattr(self._local, "ws", None)
        if ws is None or ws.capacity < n:
            ws = _Workspace(n)
            if n <= _WORKSPACE_MAX_PACKETS:
                self._local.ws = ws
        return ws


_WORKSPACE_MAX_PACKETS = 8192     # larger batches get throw-away buffers


def _output_arrays(k: int):
    """x, y, z, time, intensity (float32) and ring (uint16) of ``k`` points, as
    contiguous views of a single new allocation.  One large block instead of six
    also keeps glibc from returning the memory to the system after every
    revolution (its mmap and trim thresholds follow the largest block freed), which
    otherwise costs a page fault per 4 kB on the next one."""
    block = np.empty(22 * k, np.uint8)
    floats = block[:20 * k].view(np.float32).reshape(5, k)
    return floats[0], floats[1], floats[2], floats[3], floats[4], block[20 * k:].view(np.uint16)


class _Workspace:
    """Flat buffers for the slots of up to ``capacity`` packets, reused between calls.

    Separate allocations: numpy's SIMD sin/cos fall back to a scalar loop (25 times
    slower) when input and output are different views of one buffer.
    """

    def __init__(self, capacity: int):
        self.capacity = capacity
        size = capacity * BLOCKS * SLOTS
        self.words, self.wk, self.dk = (np.empty(size, np.uint32) for _ in range(3))
        self.dist = np.empty(size, np.uint16)
        self.lk = np.empty(size, np.uint8)
        self.valid = np.empty(size, bool)
        self.arange = np.arange(size, dtype=np.intp)
        self.slot, self.blk, self.laser = (np.empty(size, np.intp) for _ in range(3))
        self.d, self.a, self.b, self.c, self.e, self.f = (
            np.empty(size, np.float32) for _ in range(6))


def decode_packets(packets, model="VLP16", stamps=None, **options) -> Points:
    """One-shot :meth:`VelodyneDecoder.decode` (options as for the decoder)."""
    return VelodyneDecoder(model, **options).decode(packets, stamps)


class RevolutionAssembler:
    """Groups packets into revolutions and decodes each one in a single batch.

    ``add`` validates the datagram (:meth:`VelodyneDecoder.check`: bad ones are
    counted by reason, described in ``last_error`` and skipped, never raised) and
    returns a revolution when one is complete, as soon as it can tell:

    Paced sender (a real sensor: packets at the model's packet rate)
        The cut is ``cut_angle`` (deg), or where the azimuth wraps when it is None
        or negative (cut angle 0).  A revolution ends before the first packet whose
        first-block azimuth passed the cut since the previous packet's (the *late*
        cut: a wrap is a drop of more than 180 deg; a cut angle is passed when it
        lies in (previous, this], going forward by at most 180 deg).  It ends
        already AT a packet (the *predictive* cut, ``predicted=True``) when the
        cut lies in (f, l + s/2]: f and l the packet's first- and last-block
        azimuths, s the azimuth step between its last two firing groups (blocks
        10 and 11, or 9 and 11 when those share an azimuth: dual return, HDL-64
        banks), all in 0.01 deg, going forward.  The next packet's first block is
        expected at l + s, so it passes the cut unless it comes more than half a
        step early; a packet whose predicted next block only just reaches the cut
        (cut in (l + s/2, l + s]) is left to the late cut, so that a real
        sensor's azimuth jitter cannot close a revolution early.  If the next
        packet does fall short of the cut anyway, it opens the next revolution and
        the cut is not counted again (no one-packet revolution).
    Bursty sender (MORAI: a whole revolution captured in one frame and sent as
    one burst of back-to-back packets)
        A revolution ends at the packet with which the packets since its start
        cover 360 deg (sum of the forward first-block steps, + l - f + s of this
        packet, >= 36000 - s/2): the burst's last packet; ``predicted=True``.  A
        burst is one capture, so the cut angle does not split it.  A packet that
        arrives more than ``burst_gap`` s after the previous one starts a new
        revolution (a new burst); an open one, which did not cover 360 deg
        (packets lost, or a receiver stalled longer than ``burst_gap`` within a
        burst), is emitted as incomplete.  Azimuths cannot tell: MORAI's bursts
        may each start where the previous one ended.
    Which one: ``burst='auto'`` (default) needs arrival times (``add(...,
    arrival=)`` or, failing that, ``stamp``).  A run is the packets between two
    arrival gaps of more than ``burst_gap``; when a run has covered 360 deg, the
    sender is judged bursty if the run arrived within a quarter of the time the
    model needs to fire those packets, paced if it took at least half of it (in
    between, or without arrival times, the judgement stands; it starts paced).
    ``'on'`` / ``'off'`` force it.

    A revolution is ``complete`` when it started at a cut (or, bursty, at a burst
    start or right after the previous revolution).  One is also emitted
    (``complete=False``) after ``max_packets`` packets without a cut.  With a
    decoder whose ``packet_time`` is ``'auto'``, the revolutions of a bursty
    sender are decoded with ``'snapshot'`` point times (every point at time 0)
    when ``snapshot_bursts`` (default).  Not thread-safe.
    """

    def __init__(self, decoder: Optional[VelodyneDecoder] = None, cut_angle: Optional[float] = None,
                 max_packets: int = 4000, burst: str = "auto", burst_gap: float = 0.02,
                 snapshot_bursts: bool = True):
        self.decoder = decoder if decoder is not None else VelodyneDecoder()
        if cut_angle is None or cut_angle < 0:
            self.cut = None
        else:
            self.cut = int(round(float(cut_angle) * 100.0)) % _AZ_MAX
        if max_packets < 1:
            raise ValueError("max_packets must be >= 1")
        if burst not in ("auto", "on", "off"):
            raise ValueError("burst must be 'auto', 'on' or 'off'")
        if not burst_gap > 0:
            raise ValueError("burst_gap must be > 0 s")
        self.max_packets = int(max_packets)
        self.burst = burst
        self.burst_gap = float(burst_gap)
        self.snapshot_bursts = bool(snapshot_bursts)
        model = self.decoder.model
        self._periods = (model.packet_period_us(False) * 1e-6, model.packet_period_us(True) * 1e-6)
        self.packets = 0               # valid packets accepted
        self.revolutions = 0
        self.bad: Counter = Counter()  # reason -> datagrams rejected
        self.aux_header = 0            # longer datagrams accepted (auxiliary header)
        self.forced_cuts = 0           # revolutions cut by max_packets
        self.predicted_cuts = 0        # revolutions closed at their own last packet
        self.late_cuts = 0             # revolutions closed when the next packet passed the cut
        self.mispredicted = 0          # predictive cuts the next packet did not confirm
        self.burst_restarts = 0        # bursty: open revolutions ended by a new burst (emitted incomplete)
        self.runs_bursty = 0           # runs of 360 deg judged bursty / paced
        self.runs_paced = 0
        self.last_error: Optional[str] = None
        self.last_product_id: Optional[int] = None
        self.last_return_mode: Optional[int] = None
        self._bursty = burst == "on"
        self._pending: List[bytes] = []
        self._stamps: List[Optional[float]] = []
        self._last_az: Optional[int] = None     # reference azimuth of the late cut
        self._hold = False                      # after a predictive cut: _last_az is the cut
        self._prev_first: Optional[int] = None  # previous packet: first-block azimuth
        self._prev_arrival: Optional[float] = None
        self._rev_cover = 0                     # forward first-block steps within the open revolution
        self._run_start: Optional[float] = None
        self._run_cover = 0
        self._run_packets = 0
        self._started_at_cut = False

    @property
    def bursty(self) -> bool:
        """Whether the sender is taken to send revolutions in bursts (see the class docstring)."""
        return self._bursty

    def snapshot_now(self) -> bool:
        """Whether a revolution emitted now is decoded with snapshot point times."""
        pt = getattr(self.decoder, "packet_time", "auto")
        return pt == "snapshot" or (pt == "auto" and self._bursty and self.snapshot_bursts)

    def counters(self) -> Dict[str, int]:
        out = {"packets": self.packets, "revolutions": self.revolutions,
               "bad": sum(self.bad.values()), "aux_header": self.aux_header,
               "forced_cuts": self.forced_cuts, "pending": len(self._pending),
               "predicted_cuts": self.predicted_cuts, "late_cuts": self.late_cuts,
               "mispredicted": self.mispredicted, "burst_restarts": self.burst_restarts,
               "runs_bursty": self.runs_bursty, "runs_paced": self.runs_paced,
               "bursty": int(self._bursty)}
        for reason, count in self.bad.items():
            out["bad_" + reason] = count
        return out

    def _crossed(self, last: int, az: int) -> bool:
        forward = (az - last) % _AZ_MAX
        if self.cut is None:
            return az < last and last - az > _AZ_MAX // 2
        if forward == 0 or forward > _AZ_MAX // 2:
            return False
        return 0 < (self.cut - last) % _AZ_MAX <= forward

    def _cut_within(self, start: int, end: int) -> bool:
        """Whether the cut (0 when wrapping) lies in (start, end], going forward <= 180 deg."""
        span = (end - start) % _AZ_MAX
        if span > _AZ_MAX // 2:
            return False
        return 0 < ((self.cut or 0) - start) % _AZ_MAX <= span

    def add(self, datagram, stamp: Optional[float] = None,
            arrival: Optional[float] = None) -> Optional[Revolution]:
        """Add one datagram; ``stamp``: its arrival time (s) as the revolution's stamp,
        ``arrival``: its arrival time (s, any clock; default ``stamp``) for burst detection."""
        try:
            packet = self.decoder.check(datagram)
        except SensorDecodeError as exc:
            self.bad[exc.reason] += 1
            self.last_error = str(exc)
            return None
        if len(packet) != len(datagram):
            self.aux_header += 1
        self.packets += 1
        self.last_return_mode = packet[1204]
        self.last_product_id = packet[1205]
        first = packet[2] | (packet[3] << 8)
        last = packet[1102] | (packet[1103] << 8)
        step = (last - (packet[1002] | (packet[1003] << 8))) % _AZ_MAX
        if step == 0:
            step = (last - (packet[902] | (packet[903] << 8))) % _AZ_MAX
        if step > _AZ_MAX // 2:
            step = 0
        cover = (last - first) % _AZ_MAX + step     # this packet's own span, to its next block
        if arrival is None:
            arrival = stamp
        gap = (arrival is not None and self._prev_arrival is not None
               and arrival - self._prev_arrival > self.burst_gap)
        forward = None if self._prev_first is None else (first - self._prev_first) % _AZ_MAX
        if forward is not None and forward > _AZ_MAX // 2:
            forward = 0                             # a backward step covers nothing

        # runs (burst detection): judged once they cover 360 deg
        if self._run_start is None or gap or arrival is None:
            self._run_start, self._run_cover, self._run_packets = arrival, 0, 0
        elif forward is not None:
            self._run_cover += forward
        self._run_packets += 1
        if self._run_cover + cover >= _AZ_MAX - step // 2 and self._run_start is not None:
            span = arrival - self._run_start
            nominal = self._run_packets * self._periods[1 if self.decoder.is_dual(
                np.frombuffer(packet, PACKET_DTYPE)) else 0]
            if span <= 0.25 * nominal:
                self.runs_bursty += 1
                if self.burst == "auto":
                    self._bursty = True
            elif span >= 0.5 * nominal:
                self.runs_paced += 1
                if self.burst == "auto" and self._bursty:
                    self._bursty = False
                    self._started_at_cut = False    # the open revolution started at a burst
            self._run_start = None                  # the next packet starts the next run

        out = None
        predicted = False
        if self._bursty:
            if self._pending and gap:
                self.burst_restarts += 1
                out = self._emit(complete=False)
                self._started_at_cut = True
            elif gap:
                self._started_at_cut = True         # a new burst
            if out is None and len(self._pending) >= self.max_packets:
                self.forced_cuts += 1
                out = self._emit(complete=False)
                self._started_at_cut = False
            if self._pending and forward is not None:
                self._rev_cover += forward
            self._pending.append(packet)
            self._stamps.append(stamp)
            if out is None and self._rev_cover + cover >= _AZ_MAX - step // 2:
                predicted = True
                out = self._emit(complete=self._started_at_cut)
                self._started_at_cut = True
            self._last_az, self._hold = first, False
        else:
            if self._last_az is not None and self._crossed(self._last_az, first):
                if self._pending:
                    self.late_cuts += 1
                    out = self._emit(complete=self._started_at_cut)
                self._started_at_cut = True
            elif len(self._pending) >= self.max_packets:
                self.forced_cuts += 1
                out = self._emit(complete=False)
                self._started_at_cut = False
            if self._hold and self._last_az is not None and (first - self._last_az) % _AZ_MAX > _AZ_MAX // 2:
                self.mispredicted += 1              # short of the cut after a predictive cut: keep the cut
            else:
                self._last_az, self._hold = first, False
            if self._pending and forward is not None:
                self._rev_cover += forward
            self._pending.append(packet)
            self._stamps.append(stamp)
            if out is None and not self._hold and self._cut_within(first, (last + step // 2) % _AZ_MAX):
                predicted = True
                out = self._emit(complete=self._started_at_cut)
                self._started_at_cut = True
                self._last_az, self._hold = self.cut or 0, True
        if predicted:
            self.predicted_cuts += 1
            out = out._replace(predicted=True)
        self._prev_first = first
        self._prev_arrival = arrival
        return out

    def flush(self) -> Optional[Revolution]:
        """Emit what is pending (``complete=False``), e.g. at shutdown."""
        out = self._emit(complete=False)
        self._started_at_cut = False
        self._last_az = None
        self._hold = False
        return out

    def _emit(self, complete: bool) -> Optional[Revolution]:
        packets, stamps = self._pending, self._stamps
        self._rev_cover = 0
        if not packets:
            return None
        self._pending, self._stamps = [], []
        have = all(s is not None for s in stamps)
        rec = np.frombuffer(b"".join(packets), dtype=PACKET_DTYPE)
        snapshot = self.snapshot_now()
        points = self.decoder.decode(rec, stamps if have else None,
                                     packet_time="snapshot" if snapshot else None)
        self.revolutions += 1
        first = packets[0]
        return Revolution(points, len(packets), complete, stamps[0],
                          struct.unpack_from("<I", first, 1200)[0],
                          (first[2] | (first[3] << 8)) / 100.0, self.decoder.is_dual(rec),
                          False, self._bursty, snapshot)


# ----------------------------------------------------------------------------- PointCloud2

class PointField(NamedTuple):
    """sensor_msgs/PointField as plain data (datatype: 7 = FLOAT32, 4 = UINT16)."""

    name: str
    offset: int
    datatype: int
    count: int


FLOAT32 = 7
UINT16 = 4
#: Fields of ROSVEL's XYZIRT cloud (velodyne_pointcloud pointcloudXYZIRT.cc, fields
#: added back to back by PointCloud2Modifier: no padding).
POINT_FIELDS = (PointField("x", 0, FLOAT32, 1), PointField("y", 4, FLOAT32, 1),
                PointField("z", 8, FLOAT32, 1), PointField("intensity", 12, FLOAT32, 1),
                PointField("ring", 16, UINT16, 1), PointField("time", 18, FLOAT32, 1))
POINT_STEP = 22
_CLOUD_DTYPE = np.dtype({"names": [f.name for f in POINT_FIELDS],
                         "formats": ["<f4", "<f4", "<f4", "<f4", "<u2", "<f4"],
                         "offsets": [f.offset for f in POINT_FIELDS], "itemsize": POINT_STEP})


class CloudData(NamedTuple):
    """Everything of a sensor_msgs/PointCloud2 but its header, as plain data."""

    height: int
    width: int
    fields: Tuple[PointField, ...]
    is_bigendian: bool
    point_step: int
    row_step: int
    data: bytes
    is_dense: bool


_PACK_LOCAL = threading.local()
_PACK_SCRATCH_MAX = 1 << 20      # points; larger clouds use a throw-away buffer


def pack_cloud(points: Points) -> CloudData:
    """Pack points into the ``data`` of an unorganised XYZIRT PointCloud2
    (height 1, little-endian).  ``is_dense`` is False only if x holds NaN
    (``keep_zero=True``)."""
    n = len(points.x)
    scratch = getattr(_PACK_LOCAL, "rec", None)       # reused: fresh memory costs page faults
    if scratch is None or len(scratch) < n:
        scratch = np.empty(n, _CLOUD_DTYPE)
        if n <= _PACK_SCRATCH_MAX:
            _PACK_LOCAL.rec = scratch
    rec = scratch[:n]
    rec["x"] = points.x
    rec["y"] = points.y
    rec["z"] = points.z
    rec["intensity"] = points.intensity
    rec["ring"] = points.ring
    rec["time"] = points.time
    dense = not bool(np.isnan(points.x).any()) if n else True
    return CloudData(1, n, POINT_FIELDS, False, POINT_STEP, POINT_STEP * n, rec.tobytes(), dense)


# The encoder lives in its own module; its names are part of this module's API.
from .velodyne_encode import encode_packets, firing_step_deg, packets_from_ranges, scan_pattern  # noqa: E402,F401
