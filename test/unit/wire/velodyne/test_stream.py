"""wire.velodyne.stream: decoding a revolution piece by piece while its packets arrive (IncrementalDecoder)
and the receive pipeline CloudStream give, bit for bit, the points and packed cloud of decoding each
revolution at once, for paced senders, MORAI's bursts, every point-time mode and the fallbacks.

The reference is the codec's own one-batch decode (VelodyneDecoder + RevolutionAssembler, tested against
the spec and ros-drivers/velodyne in wire/velodyne/test_decode.py).  No ROS.
"""
import struct

import numpy as np
import pytest

from morai_bridge.wire import velodyne as vel
from velodyne_packets import vlp16_packet


def incremental(model, chunk, packet_time='auto', **options):
    """An IncrementalDecoder and the decoder options it was made with (the node's defaults)."""
    opts = dict(model=model, return_mode='auto', interpolation='velodyne', second_firing_offset_deg=0.2,
                dual_dedupe=True, keep_zero=False, min_range=None, max_range=None, packet_time=packet_time,
                aux_header=True)
    opts.update(options)
    return vel.IncrementalDecoder(opts, chunk), opts


def scene_packets(model, revolutions=2.3, rpm=600.0, start_us=5000, dual=False, seed=0, stamps='real'):
    """Packets of a few revolutions of a plausible scene (codec encoder: the reference here is the codec's
    own one-batch decode), the device stamps rewritten as asked."""
    az, _ = vel.scan_pattern(model, rpm)
    cols = int(len(az) * revolutions)
    rng = np.random.RandomState(seed)
    az_all = np.concatenate([az] * 3)[:cols]
    ranges = rng.uniform(0.5, 90.0, size=(cols, az.shape[1]))
    ranges[rng.rand(*ranges.shape) < 0.1] = np.nan
    last = ranges * rng.uniform(1.0, 1.2, size=ranges.shape) if dual else None
    packets = vel.packets_from_ranges(model, ranges, rng.randint(0, 256, size=ranges.shape), rpm=rpm,
                                      start_time_us=start_us, last_ranges_m=last,
                                      last_intensities=rng.randint(0, 256, size=ranges.shape) if dual else None)
    del az_all
    out = []
    for i, p in enumerate(packets):
        p = bytearray(p)
        if stamps == 'zero':
            struct.pack_into('<I', p, 1200, 0)
        elif stamps == 'glitch' and i % 97 == 50:
            struct.pack_into('<I', p, 1200, 7)          # one implausible step in the middle of a revolution
        elif stamps == 'wrap':
            struct.pack_into('<I', p, 1200, (3600000000 - 40000 + i * 1327) % 3600000000)   # crosses the hour
        out.append(bytes(p))
    return out


def idle_of(assembler):
    """The receive loop's idle call after every datagram (as when packets come slower than they are read),
    where the assembler's decoder is an IncrementalDecoder."""
    return getattr(assembler.decoder, 'advance', lambda: None)


def revolutions_of(assembler, packets, extra=()):
    revs = []
    idle = idle_of(assembler)
    for i, p in enumerate(packets):
        for e in extra:
            if i == e[0]:
                assembler.add(e[1], 1.0 + i)
        r = assembler.add(p, 1.0 + i * 0.001)
        idle()
        if r is not None:
            revs.append(r)
    r = assembler.flush()
    if r is not None:
        revs.append(r)
    return revs


@pytest.mark.parametrize('model,chunk,packet_time,stamps,dual,options', [
    ('HDL32E', 16, 'auto', 'real', False, {}),
    ('VLP16', 16, 'auto', 'real', False, {}),
    ('VLP16', 5, 'auto', 'real', True, {}),
    ('PUCK_HIRES', 1, 'auto', 'real', False, {'interpolation': 'fixed'}),
    ('VLP32C', 7, 'auto', 'real', False, {'keep_zero': True}),
    ('MORAI_64', 16, 'auto', 'real', False, {'min_range': 2.0, 'max_range': 60.0}),
    ('HDL32E', 16, 'auto', 'zero', False, {}),          # MORAI may send no time: nominal times
    ('HDL32E', 16, 'auto', 'glitch', False, {}),        # plausible, then not: one-batch fallback
    ('VLP16', 16, 'auto', 'wrap', False, {}),           # device time crosses the hour
    ('HDL32E', 16, 'device', 'glitch', False, {}),
    ('HDL32E', 16, 'nominal', 'real', False, {}),
    ('HDL32E', 16, 'host', 'real', False, {}),          # host times: always one batch
    ('HDL32E', 1000, 'auto', 'real', False, {}),        # chunk longer than a revolution
    ('HDL32E', 0, 'auto', 'real', False, {}),           # off
])
def test_incremental_decoding_is_bit_identical_to_one_batch(model, chunk, packet_time, stamps, dual, options):
    packets = scene_packets(model, dual=dual, stamps=stamps)
    dec, cfg = incremental(model, chunk, packet_time, **options)
    packets[90] = b'AUX!' * 4 + packets[90]                        # an auxiliary header
    bad = [(40, b'\xff\xee' + bytes(1204)), (41, bytes(50))]         # and noise
    got = revolutions_of(vel.RevolutionAssembler(dec, cut_angle=None), packets, bad)
    want = revolutions_of(vel.RevolutionAssembler(vel.VelodyneDecoder(**cfg), cut_angle=None), packets, bad)
    assert len(got) == len(want) >= 3
    for g, w in zip(got, want):
        assert g[1:] == w[1:]                                     # packets, complete, stamps, azimuth, dual
        assert vel.pack_cloud(g.points).data == vel.pack_cloud(w.points).data
    assert dec.points is got[-1].points
    if chunk == 1000:                                             # longer than a revolution: one piece at the end
        assert dec.at_end == len(got) and dec.incremental == dec.fallbacks == 0
        assert dec.cloud == vel.pack_cloud(got[-1].points)
    elif chunk and packet_time != 'host' and stamps != 'glitch':
        assert dec.incremental == len(got) and dec.fallbacks == 0
        # the packed pieces are what pack_cloud gives for the whole revolution
        assert dec.cloud == vel.pack_cloud(got[-1].points)
    elif chunk:
        assert dec.fallbacks >= 1
    else:
        assert dec.incremental == dec.fallbacks == 0 and dec.cloud is None


def test_incremental_decoding_with_a_cut_angle_and_forced_cuts():
    packets = scene_packets('VLP16', revolutions=3.1)
    dec, cfg = incremental('VLP16', 4)
    got = revolutions_of(vel.RevolutionAssembler(dec, cut_angle=90.0, max_packets=30), packets)
    want = revolutions_of(vel.RevolutionAssembler(vel.VelodyneDecoder(**cfg), cut_angle=90.0, max_packets=30), packets)
    assert [r.packets for r in got] == [r.packets for r in want] and len(got) > 6
    for g, w in zip(got, want):
        assert vel.pack_cloud(g.points).data == vel.pack_cloud(w.points).data
    assert dec.fallbacks == 0


def burst_revolutions(count, start=0, seed=1):
    """VLP-16 revolutions as MORAI 25.S4 sends them: 75 packets of 12 blocks 0.4 deg apart, covering 360 deg
    from ``start`` (0.01 deg), every packet of a revolution with the same device time."""
    rng = np.random.RandomState(seed)
    revs = []
    for r in range(count):
        revs.append([vlp16_packet([(start + (p * 12 + b) * 40) % 36000 for b in range(12)],
                                  (rng.randint(0, 20000, size=(12, 32)) * (rng.rand(12, 32) > 0.1)).tolist(),
                                  rng.randint(0, 256, size=(12, 32)).tolist(), 7000 + 100000 * r)
                     for p in range(75)])
    return revs


def burst_feed(assembler, revs, t0=50.0, gap_at=None, idle_every=1):
    """Feed bursts 30 us a packet; the receive loop is idle after every ``idle_every`` packets (0: never)."""
    out = []
    idle = idle_of(assembler)
    for r, packets in enumerate(revs):
        for p, pkt in enumerate(packets):
            t = t0 + 0.1 * r + 30e-6 * p + (0.05 if gap_at is not None and (r, p) >= gap_at else 0.0)
            rev = assembler.add(pkt, t, t)
            if idle_every and p % idle_every == idle_every - 1:
                idle()
            if rev is not None:
                out.append(rev)
    return out


@pytest.mark.parametrize('chunk,packet_time,start', [(16, 'auto', 0), (5, 'auto', 750), (16, 'snapshot', 0),
                                                     (16, 'nominal', 0), (16, 'device', 750), (1, 'auto', 0)])
def test_incremental_decoding_of_bursts_is_bit_identical_to_one_batch(chunk, packet_time, start):
    revs = burst_revolutions(5, start)
    dec, cfg = incremental('VLP16', chunk, packet_time)
    asm = vel.RevolutionAssembler(dec)
    dec.snapshot_hint = asm.snapshot_now
    got = burst_feed(asm, revs)
    want = burst_feed(vel.RevolutionAssembler(vel.VelodyneDecoder(**cfg)), revs)
    assert len(got) == len(want) >= 4
    for g, w in zip(got, want):
        assert g[1:] == w[1:]
        assert vel.pack_cloud(g.points).data == vel.pack_cloud(w.points).data
    complete = [r for r in got if r.complete]
    assert len(complete) == 4 and all(r.predicted and r.packets == 75 for r in complete)
    snap = packet_time in ('auto', 'snapshot')
    assert all(r.snapshot == snap for r in complete)
    if snap:
        assert not any(r.points.time.any() for r in complete)
    # the last revolutions were decoded piece by piece while the burst arrived, in the mode of the cloud
    assert dec.points is got[-1].points and dec.cloud == vel.pack_cloud(got[-1].points)
    assert dec.incremental >= 4


def test_incremental_decoding_when_burst_detection_changes_mid_revolution():
    revs = burst_revolutions(3)
    dec, cfg = incremental('VLP16', 8)
    asm = vel.RevolutionAssembler(dec)
    dec.snapshot_hint = asm.snapshot_now
    got = burst_feed(asm, revs)
    assert asm.bursty and dec.fallbacks == 1      # the first burst: judged bursty only at its last packet
    # the same revolutions now paced: the first is decoded in pieces as a snapshot, then the sender is
    # judged paced at its last packet: that revolution is decoded at once with nominal times
    period = vel.get_model('VLP16').packet_period_us() * 1e-6
    ref = vel.RevolutionAssembler(vel.VelodyneDecoder(**cfg))
    burst_feed(ref, revs)
    t = 60.0
    for pkt in revs[0] + revs[1] + revs[0][:1]:
        t += period
        a, b = asm.add(pkt, t, t), ref.add(pkt, t, t)
        dec.advance()                              # paced: the loop is idle between packets
        assert (a is None) == (b is None)
        if a is not None:
            got.append(a)
            assert a[1:] == b[1:] and vel.pack_cloud(a.points).data == vel.pack_cloud(b.points).data
    assert not asm.bursty and dec.fallbacks == 2 and not got[-1].snapshot


@pytest.mark.parametrize('step_us,device', [(1, True), (100000, True), (100001, False), (0, False)])
def test_auto_step_rule_agrees_with_the_codec(step_us, device):
    """'auto' packet times (spec: device stamps when every step is 1 us .. 100 ms): the one-batch decoder and
    the incremental decoder's choice of mode agree at the boundaries."""
    packets = scene_packets('HDL32E', revolutions=0.1)[:3]
    packets = [p[:1200] + struct.pack('<I', 1000 + i * step_us) + p[1204:] for i, p in enumerate(packets)]
    t = vel.VelodyneDecoder('HDL32E', keep_zero=True).decode(packets).time     # 384 points per packet
    period = vel.get_model('HDL32E').packet_period_us() * 1e-6
    assert float(t[2 * 384]) == pytest.approx(2 * (step_us * 1e-6 if device else period), abs=1e-7)
    dec, _ = incremental('HDL32E', 1)
    dec._reset(list(packets))
    assert (dec._mode_for(3) == 'device') == device


@pytest.mark.parametrize('model,chunk,burst,idle_every', [
    ('HDL32E', 32, False, 1), ('VLP16', 32, True, 1), ('VLP16', 7, True, 3),
    ('VLP16', 32, True, 0),        # a burst read without a pause: decoded at once at its end
    ('HDL32E', 0, False, 1)])      # off
def test_cloud_stream_packs_each_revolution_as_pack_cloud_does(model, chunk, burst, idle_every):
    """What lidar_bridge publishes: CloudStream.packed's pieces joined are pack_cloud of the one-batch decode,
    whether the receive loop had idle time (pieces decoded while the packets came) or not."""
    opts = dict(model=model)
    stream = vel.CloudStream(opts, decode_chunk=chunk)
    ref = vel.RevolutionAssembler(vel.VelodyneDecoder(**opts))
    got = []

    def feed(i, pkt, t):
        rev = stream.add(pkt, t, t)
        if rev is not None:
            got.append((rev, stream.packed(rev)))
        elif idle_every and i % idle_every == idle_every - 1:
            stream.idle()
    if burst:
        revs = burst_revolutions(4)
        want = burst_feed(ref, revs)
        for r, packets in enumerate(revs):
            for p, pkt in enumerate(packets):
                feed(p, pkt, 50.0 + 0.1 * r + 30e-6 * p)
    else:
        packets = scene_packets(model, revolutions=3.5)
        for i, p in enumerate(packets):
            feed(i, p, 1.0 + i * 0.001)
        want = revolutions_of(ref, packets)[:len(got)]
    assert len(got) == len(want) >= 3
    for (rev, packed), w in zip(got, want):
        cloud = vel.pack_cloud(w.points)
        assert packed.revolution is rev and rev[1:] == w[1:]
        assert b''.join(packed.pieces) == cloud.data
        assert (packed.width, packed.is_dense) == (cloud.width, cloud.is_dense) == (len(w.points), True)
    pieces = [len(packed.pieces) for _, packed in got[1:]]
    d = stream.decoder
    if chunk and idle_every:       # decoded while the packets arrived, bursts included
        assert min(pieces) > 1 and d.incremental >= len(got) - 1
    elif chunk:                    # no idle time: one piece at the end, no fallback
        assert pieces == [1] * len(pieces) and d.incremental == d.fallbacks == 0 and d.at_end >= len(got) - 1
    else:
        assert pieces == [1] * len(pieces) and d.incremental == d.at_end == 0


def test_cloud_stream_names_the_arrival_of_each_revolutions_last_packet_and_counts():
    """``last_packet_arrival``: the packet that completed a revolution when the cut was predicted
    (a burst's last packet), else the packet before the one that showed the cut; ``counters``
    reports the assembler's and decoder's counts; a bad datagram is counted, not raised."""
    stream = vel.CloudStream(dict(model='VLP16'), decode_chunk=0)
    packets = scene_packets('VLP16', revolutions=2.5)
    arrivals = [1.0 + i * 0.001 for i in range(len(packets))]
    seen = []
    for i, (p, t) in enumerate(zip(packets, arrivals)):
        rev = stream.add(p, t, t)
        if rev is not None:
            seen.append((i, rev.predicted, stream.last_packet_arrival))
    stream.add(b'\x00' * 10, 9.0, 9.0)
    assert len(seen) >= 2
    for i, predicted, last in seen:
        assert last == (arrivals[i] if predicted else arrivals[i - 1])
    c = stream.counters()
    assert c['packets'] == len(packets) and c['revolutions'] == len(seen)
    assert sum(c['bad'].values()) == 1 and stream.last_error
    assert c['predicted_cuts'] + c['late_cuts'] == len(seen)
    burst = vel.CloudStream(dict(model='VLP16'), decode_chunk=0)
    got = []
    for r, revpackets in enumerate(burst_revolutions(3)):
        for p, pkt in enumerate(revpackets):
            t = 50.0 + 0.1 * r + 30e-6 * p
            if burst.add(pkt, t, t) is not None:
                got.append((t, burst.last_packet_arrival))
    assert got and all(t == last for t, last in got)


def test_a_revolution_runs_through_four_wire_modules():
    """docs/architecture.md: a Velodyne packet becomes /velodyne_points through lidar_ros and, behind
    CloudStream, stream, revolution, decode and cloud: four modules of wire/velodyne run (sys.setprofile
    over add, idle and serialized), five with lidar_ros."""
    import os
    import sys
    root = os.path.dirname(os.path.abspath(vel.__file__))
    seen = set()

    def profile(frame, event, arg):
        if event == 'call' and frame.f_code.co_filename.startswith(os.path.dirname(os.path.dirname(root))):
            seen.add(os.path.relpath(frame.f_code.co_filename, os.path.dirname(os.path.dirname(root))))
    stream = vel.CloudStream(dict(model='VLP16'), decode_chunk=8)
    packets = scene_packets('VLP16', revolutions=2.5)
    bodies = []
    sys.setprofile(profile)
    try:
        for i, p in enumerate(packets):
            rev = stream.add(p, 1.0 + i * 0.001, 1.0 + i * 0.001)
            if rev is not None:
                bodies.append(stream.serialized(rev))
            stream.idle()
    finally:
        sys.setprofile(None)
    assert len(bodies) >= 2
    assert sorted(seen) == ['wire/velodyne/cloud.py', 'wire/velodyne/decode.py', 'wire/velodyne/revolution.py',
                            'wire/velodyne/stream.py'], sorted(seen)


def test_a_link_s_duplicates_late_packets_and_losses_leave_the_cloud_of_the_packets_that_arrived():
    """Issue 50: bursts through a lossy, reordering, duplicating link.  Every revolution decoded piece by piece is
    bit-identical to one batch of the packets of it that arrived, once each; duplicates and overtaken packets are
    not in it; holes are counted (missing, coverage)."""
    revs = burst_revolutions(5)
    faulty, arrived = [], []
    for r, packets in enumerate(revs):
        got = list(packets)
        if r == 1:
            got.insert(11, packets[10])          # a duplicate 1 packet later
            got.insert(31, packets[5])           # a copy of an earlier one
        if r == 2:
            del got[40:43]                       # three lost
            got.insert(50, got[45])              # one overtaken: sent after the 4 that follow it
            del got[45]
        if r == 3:
            del got[74]                          # its last packet lost: the burst ends short of 360 deg
        faulty.append(got)
        seen, keep = -1, []
        for pkt in got:                          # what should be kept: forward azimuths only
            az = pkt[2] | (pkt[3] << 8)
            if az > seen:
                keep.append(pkt)
                seen = az
        arrived.append(keep)
    dec, cfg = incremental('VLP16', 8, 'auto')
    asm = vel.RevolutionAssembler(dec)
    dec.snapshot_hint = asm.snapshot_now
    got = burst_feed(asm, faulty)
    assert asm.duplicate_packets == 2 and asm.late_packets == 1
    by_start = {r.device_time_us: r for r in got}
    for r, keep in enumerate(arrived):
        rev = by_start[7000 + 100000 * r]
        assert rev.packets == len(keep)
        want = vel.VelodyneDecoder(**dict(cfg, packet_time='snapshot')).decode(keep, packet_time='snapshot')
        assert vel.pack_cloud(rev.points).data == vel.pack_cloud(want).data
    assert [(by_start[7000 + 100000 * r].missing, round(by_start[7000 + 100000 * r].coverage, 3))
            for r in range(4)] == [(0, 1.0), (0, 1.0), (4, 0.947), (1, 0.987)]
    # the first burst is judged paced (the sender is judged bursty at its end): not complete, as ever
    assert [by_start[7000 + 100000 * r].complete for r in range(4)] == [False, True, True, False]
    assert by_start[7000 + 300000].short and sum(r.missing for r in got) >= 5
