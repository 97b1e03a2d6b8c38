"""Velodyne data packets -> points, vectorised with numpy (part of :mod:`morai_bridge.wire.velodyne`).

MORAI's 3D LiDAR sends the data packets of a real Velodyne sensor, one per UDP
datagram, so that Velodyne tools can read them.  Facts and confidence tags
([C] confirmed, [S] single source, [I] inferred, [?] unknown) are those of
docs/sensors.md, "3D LiDAR"; the ros-drivers/velodyne conventions
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
Coordinates: ROS frame as ROSVEL (x forward, y left, z up):
x = R cos(w) cos(a), y = -R cos(w) sin(a), z = R sin(w), with w the elevation
and a the azimuth (+ per-laser offset) [C].

Ports [C] spec 7: user-set; MORAI's WeGo and SensorExample use destination 2368
(:data:`DEFAULT_PORT`, also Velodyne's own default).

Public API: ``VelodyneDecoder(model='VLP16', return_mode='auto',
interpolation='velodyne', second_firing_offset_deg=0.2, dual_dedupe=True,
keep_zero=False, min_range=None, max_range=None, packet_time='auto',
aux_header=True)`` with ``.check(datagram) -> bytes`` (the 1206-byte packet)
and ``.decode(packets, stamps=None, packet_time=None) -> Points``;
``decode_packets(packets, model='VLP16', stamps=None, **options) -> Points``.
Bad packets raise only :class:`SensorDecodeError`.  No ROS imports.
"""

import math
import struct
import threading
from typing import Optional, Sequence

import numpy as np

from ..sensor_errors import SensorDecodeError, check_bytes
from .models import (AUX_HEADER_SEARCH, BLOCKS, HOUR_US, LOWER_BANK, PACKET_DTYPE, PACKET_SIZE, RETURN_DUAL, SLOTS,
                     UPPER_BANK, AUTO_STEP_MAX_US, AZ_MAX, get_model)


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
        return f"Points({len(self.x)} points)"

    @classmethod
    def empty(cls) -> "Points":
        f = np.empty(0, np.float32)
        return cls(f, f.copy(), f.copy(), f.copy(), np.empty(0, np.uint16), f.copy())



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
        #: seconds between packets of a paced sender: (single return, dual return)
        self.packet_periods_s = (m.packet_period_us(False) * 1e-6, m.packet_period_us(True) * 1e-6)
        if return_mode not in ("auto", "single", "dual"):
            raise ValueError("return_mode must be 'auto', 'single' or 'dual'")
        if interpolation not in ("velodyne", "fixed"):
            raise ValueError("interpolation must be 'velodyne' or 'fixed'")
        if packet_time not in PACKET_TIMES:
            raise ValueError(f"packet_time must be one of {', '.join(map(repr, PACKET_TIMES))}")
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

    def discard_last(self) -> None:
        """The packet :meth:`check` returned last is not used (a duplicate, a late packet): nothing
        to forget here (:class:`~morai_bridge.wire.velodyne.stream.IncrementalDecoder` keeps packets)."""

    def check(self, datagram) -> bytes:
        """The 1206-byte packet of a datagram, validated (length, block flags,
        azimuths < 36000); raises :class:`SensorDecodeError` with ``reason``
        'length', 'flag' or 'azimuth'.  A longer datagram is accepted as described
        under ``aux_header`` (its ``reason`` on failure is still 'length')."""
        data = datagram if datagram.__class__ is bytes else check_bytes(datagram)
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
                            and max(_AZIMUTHS.unpack(candidate[:1200])) < AZ_MAX):
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
        if max(azimuths) >= AZ_MAX:
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
            if mode == "device" or (step.min() > 0 and step.max() <= AUTO_STEP_MAX_US):
                rel = np.zeros(n)
                step.cumsum(out=rel[1:])
                rel *= 1e-6
                return rel
        return np.arange(n) * self.packet_periods_s[bool(dual)]

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
            raise ValueError(f"packet_time must be one of {', '.join(map(repr, PACKET_TIMES))}")
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
            raise SensorDecodeError(f"packet {int(np.flatnonzero(~ok.all(axis=1))[0])} has bad block flags", "flag",
                                    length=PACKET_SIZE)
        az = blocks["azimuth"]
        if int(az.max()) >= AZ_MAX:
            raise SensorDecodeError("packet %d has a block azimuth >= 36000"
                                    % int(np.flatnonzero(np.any(az >= AZ_MAX, axis=1))[0]),
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
                np.remainder(step, AZ_MAX, out=step)
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
