"""wire.velodyne.decode: the vectorised decoder against the slow reference decoder
(test/unit/velodyne_reference.py, from the spec's formulas), packet times, datagram checks, fuzzing,
the per-thread scratch buffers.  Random packets are built byte by byte, not with the module's encoder.
Its geometry checks are in test_decode_geometry.py."""

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morai_bridge.wire import velodyne as vel
from morai_bridge.wire.velodyne import RevolutionAssembler, SensorDecodeError, VelodyneDecoder
from velodyne_reference import as_rows, assert_same, one_packet, random_packets, reference_decode

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ----------------------------------------------------------------------------- vs reference

@pytest.mark.parametrize("model", list(vel.MODELS))
def test_decoder_matches_reference(model):
    packets = random_packets(model, 12, seed=len(model))
    dec = VelodyneDecoder(model, packet_time="nominal")
    pts = dec.decode(packets)
    assert pts.x.dtype == np.float32 and pts.time.dtype == np.float32
    assert pts.ring.dtype == np.uint16
    assert_same(pts, reference_decode(model, packets))
    # the same through an (N, 1206) array and one at a time
    arr = np.frombuffer(b"".join(packets), np.uint8).reshape(len(packets), 1206)
    assert as_rows(dec.decode(arr)) == as_rows(pts)
    one = dec.decode(packets[:1])
    assert np.allclose(np.array(as_rows(one)), np.array(as_rows(pts)[:len(one)]), atol=1e-5)


@pytest.mark.parametrize("model", ["VLP16", "PUCK_HIRES"])
def test_fixed_second_firing_offset_matches_reference(model):
    packets = random_packets(model, 4, seed=3)
    pts = VelodyneDecoder(model, interpolation="fixed", packet_time="nominal").decode(packets)
    assert_same(pts, reference_decode(model, packets, interpolation="fixed"))


@pytest.mark.parametrize("model", ["VLP16", "HDL32E", "VLP32C"])
def test_dual_return_matches_reference(model):
    packets = random_packets(model, 6, seed=11, mode=0x39)
    pts = VelodyneDecoder(model, packet_time="nominal").decode(packets)
    ref = reference_decode(model, packets, dual=True)
    assert_same(pts, ref)
    # without de-duplication every return of both blocks is kept
    everything = VelodyneDecoder(model, packet_time="nominal", dual_dedupe=False).decode(packets)
    assert len(everything) > len(pts)
    assert len(everything) == sum(1 for p in packets for b in range(12) for k in range(32)
                                  if struct.unpack_from("<H", p, 100 * b + 4 + 3 * k)[0])
    # return_mode='single' forces the single-return layout
    single = VelodyneDecoder(model, return_mode="single", packet_time="nominal").decode(packets)
    assert_same(single, reference_decode(model, packets, dual=False))


def test_dual_dedupe_needs_same_distance_and_intensity():
    az = [5.0 + 0.4 * (b // 2) for b in range(12)]
    cells = {(0, 0): (10.0, 50), (1, 0): (10.0, 50),      # one return: identical blocks
             (0, 1): (10.0, 50), (1, 1): (10.0, 60),      # same distance, other intensity
             (0, 2): (10.0, 50), (1, 2): (12.0, 50)}      # other distance
    pts = VelodyneDecoder("VLP16").decode([one_packet("VLP16", az, cells, mode=0x39)])
    assert pts.intensity.tolist() == [50, 50, 50, 60, 50]
    assert pts.ring.tolist() == [0, 8, 1, 8, 1]


def test_keep_zero_gives_nan_points():
    packets = random_packets("HDL32E", 3, seed=5, zero_fraction=0.5)
    pts = VelodyneDecoder("HDL32E", keep_zero=True, packet_time="nominal").decode(packets)
    assert len(pts) == 3 * 384
    assert_same(pts, reference_decode("HDL32E", packets, keep_zero=True))
    assert np.isnan(pts.x).sum() == sum(1 for p in packets for b in range(12) for k in range(32)
                                        if struct.unpack_from("<H", p, 100 * b + 4 + 3 * k)[0] == 0)


def test_range_limits():
    packets = random_packets("VLP16", 5, seed=9)
    pts = VelodyneDecoder("VLP16", packet_time="nominal").decode(packets)
    r = np.sqrt(pts.x.astype(np.float64) ** 2 + pts.y ** 2 + pts.z ** 2)
    lim = VelodyneDecoder("VLP16", min_range=20.0, max_range=100.0,
                          packet_time="nominal").decode(packets)
    keep = (r >= 20.0 - 1e-3) & (r <= 100.0 + 1e-3)
    assert len(lim) == int(keep.sum())
    assert np.allclose(lim.x, pts.x[keep]) and np.array_equal(lim.ring, pts.ring[keep])


# ----------------------------------------------------------------------------- times

def test_packet_time_sources():
    packets = random_packets("HDL32E", 4, seed=2, zero_fraction=0.0)
    stamps = [struct.unpack_from("<I", p, 1200)[0] for p in packets]
    first_slot = [i * 384 for i in range(4)]
    dev = VelodyneDecoder("HDL32E").decode(packets)            # auto -> device stamps
    steps = [(s - stamps[0]) % (3600 * 10 ** 6) * 1e-6 for s in stamps]
    assert np.allclose(dev.time[first_slot], steps, atol=1e-7)
    nom = VelodyneDecoder("HDL32E", packet_time="nominal").decode(packets)
    assert np.allclose(nom.time[first_slot], [i * 552.96e-6 for i in range(4)], atol=1e-7)
    host = VelodyneDecoder("HDL32E", packet_time="host").decode(packets,
                                                                 stamps=[5.0, 5.1, 5.2, 5.4])
    assert np.allclose(host.time[first_slot], [0, 0.1, 0.2, 0.4], atol=1e-6)
    # equal device stamps are not credible: auto falls back to nominal times
    flat = [p[:1200] + struct.pack("<I", 7) + p[1204:] for p in packets]
    assert np.allclose(VelodyneDecoder("HDL32E").decode(flat).time, nom.time)
    # the hour wraps
    hour = 3600 * 10 ** 6
    wrap = [p[:1200] + struct.pack("<I", (hour - 300 + 553 * i) % hour) + p[1204:]
            for i, p in enumerate(packets)]
    assert np.allclose(VelodyneDecoder("HDL32E").decode(wrap).time[first_slot],
                       [i * 553e-6 for i in range(4)], atol=1e-7)


# ----------------------------------------------------------------------------- datagrams

def test_check_datagrams():
    dec = VelodyneDecoder("VLP16")
    pkt = random_packets("VLP16", 1, seed=1)[0]
    assert dec.check(pkt) == pkt and dec.check(bytearray(pkt)) == pkt
    reasons = {}
    for name, data in {"short": pkt[:-1], "long": b"\x00" + pkt, "empty": b"",
                       "flag": pkt[:100] + b"\xff\xdd" + pkt[102:],
                       "azimuth": pkt[:2] + struct.pack("<H", 36000) + pkt[4:]}.items():
        with pytest.raises(SensorDecodeError) as info:
            VelodyneDecoder("VLP16", aux_header=False).check(data)
        reasons[name] = info.value.reason
    assert reasons == {"short": "length", "long": "length", "empty": "length", "flag": "flag",
                       "azimuth": "azimuth"}
    # auxiliary header: a FF EE payload start within the first 64 bytes
    assert dec.check(b"\x01" * 42 + pkt) == pkt
    assert dec.check(pkt + b"\x00") == pkt                      # trailing bytes
    assert dec.check(b"\xff\xee\x00" + pkt + b"tail") == pkt     # first FF EE is a false start
    with pytest.raises(SensorDecodeError):
        dec.check(b"\x01" * 65 + pkt)
    with pytest.raises(SensorDecodeError):
        VelodyneDecoder("VLP16", aux_header=False).check(b"\x01" * 42 + pkt)
    assert VelodyneDecoder("MORAI_64").check(one_packet("MORAI_64", [0] * 12, {}))
    with pytest.raises(SensorDecodeError):
        dec.decode([pkt, pkt[:-1]])
    with pytest.raises(TypeError):
        dec.check("text")


@SETTINGS
@given(st.binary(max_size=1400))
def test_fuzz_check_raises_only_its_error(data):
    for model in ("VLP16", "MORAI_64"):
        try:
            VelodyneDecoder(model).check(data)
        except SensorDecodeError:
            pass


@SETTINGS
@given(st.binary(min_size=1206, max_size=1206), st.sampled_from(list(vel.MODELS)))
def test_fuzz_decode_of_any_contents(data, model):
    raw = bytearray(data)
    for b in range(12):
        raw[100 * b:100 * b + 2] = b"\xff\xee"
        azimuth = struct.unpack_from("<H", raw, 100 * b + 2)[0] % 36000
        raw[100 * b + 2:100 * b + 4] = struct.pack("<H", azimuth)
    pts = VelodyneDecoder(model).decode([bytes(raw)])
    assert len(pts) <= 384 and not np.isnan(pts.x).any()
    assert all(len(a) == len(pts) for a in (pts.y, pts.z, pts.intensity, pts.ring, pts.time))
    assert (pts.ring < vel.MODELS[model].lasers).all()


def test_packet_time_snapshot_and_its_checks():
    packets = random_packets("HDL32E", 4, seed=3)
    dec = VelodyneDecoder("HDL32E", packet_time="snapshot")
    pts = dec.decode(packets)
    ref = VelodyneDecoder("HDL32E").decode(packets)
    assert not pts.time.any() and np.array_equal(pts.x, ref.x) and np.array_equal(pts.ring, ref.ring)
    assert VelodyneDecoder("HDL32E").decode(packets, packet_time="snapshot").time.max() == 0.0
    with pytest.raises(ValueError):
        VelodyneDecoder("HDL32E", packet_time="zero")
    with pytest.raises(ValueError):
        dec.decode(packets, packet_time="zero")
    with pytest.raises(ValueError):
        RevolutionAssembler(dec, burst="maybe")


def test_empty_batch():
    assert len(VelodyneDecoder("VLP16").decode([])) == 0


def test_scratch_buffers_are_per_thread_and_grow():
    import threading
    sets = [random_packets("VLP16", n, seed=n) for n in (1, 7, 20)]
    expected = [as_rows(VelodyneDecoder("VLP16", packet_time="nominal").decode(p)) for p in sets]
    dec = VelodyneDecoder("VLP16", packet_time="nominal")
    for p, e in zip(sets, expected):                 # capacity grows, then shrinks back
        assert as_rows(dec.decode(p)) == e
    assert as_rows(dec.decode(sets[0])) == expected[0]
    errors = []

    def worker(i):
        try:
            for _ in range(30):
                for j in (i % 3, (i + 1) % 3):
                    if as_rows(dec.decode(sets[j])) != expected[j]:
                        errors.append((i, j))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    # a non-contiguous array of packet records
    rec = np.frombuffer(b"".join(sets[2]), vel.PACKET_DTYPE)
    assert as_rows(dec.decode(rec[::2])) == as_rows(dec.decode(sets[2][::2]))
