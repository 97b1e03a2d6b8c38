"""ERP-42 stream framer (spec section 8): vector streams, chunking invariance, robustness."""

import time

import pytest
from hypothesis import given, settings, strategies as st

import helpers
from morai_bridge.wire.erp42 import (
    Command, CommandFramer, Erp42Error, Feedback, FeedbackFramer, Framer,
    encode_command, encode_feedback)

V = helpers.load_vectors("erp42")

STREAMS = V["streams"]
FB_FRAMES = [v for v in V["frames"] if v["direction"] == "pcu_to_upper"]
CMD_FRAMES = [v for v in V["frames"] if v["direction"] == "upper_to_pcu"]


def make_framer(stream):
    return FeedbackFramer() if stream["direction"] == "pcu_to_upper" else CommandFramer()


def expected(stream):
    cls = Feedback if stream["direction"] == "pcu_to_upper" else Command
    return [cls(**f) for f in stream["fields"]]


def run(framer, chunks):
    out = []
    for c in chunks:
        out += framer.feed(c)
    return out


def whole(stream):
    return bytes.fromhex(stream["hex"])


def test_stream_hex_equals_concatenated_chunks():
    for s in STREAMS:
        assert b"".join(bytes.fromhex(c) for c in s["chunks"]) == whole(s)


@pytest.mark.parametrize("stream", STREAMS, ids=lambda s: s["name"])
@pytest.mark.parametrize("mode", ["chunks", "all_at_once", "byte_by_byte"])
def test_vector_streams(stream, mode):
    data = whole(stream)
    if mode == "chunks":
        chunks = [bytes.fromhex(c) for c in stream["chunks"]]
    elif mode == "all_at_once":
        chunks = [data]
    else:
        chunks = [data[i:i + 1] for i in range(len(data))]
    fr = make_framer(stream)
    assert run(fr, chunks) == expected(stream)
    assert fr.bytes_discarded == stream["expected_discarded_bytes"]
    assert fr.pending == stream["expected_leftover_bytes"]
    assert fr.frames_ok == len(stream["fields"])
    assert fr.bytes_received == len(data)


def test_false_header_rejected_by_enumeration_not_trailer():
    s = next(x for x in STREAMS if x["name"] == "stream_fb_false_stx_passes_trailer_check")
    data = whole(s)
    # Premise of the vector: the false candidate's trailer position holds 0D 0A.
    assert data[16:18] == b"\r\n" and data[5] > 2
    fr = FeedbackFramer()
    assert fr.feed(data) == expected(s)
    assert fr.candidates_rejected == 1


def test_noise_stream_counts_rejects():
    s = next(x for x in STREAMS if x["name"] == "stream_fb_noise_split_frames")
    fr = FeedbackFramer()
    run(fr, [whole(s)])
    assert fr.candidates_rejected == 1  # the false "STX 01" start


@st.composite
def chunkings(draw, data):
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0] + cuts + [len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


@pytest.mark.parametrize("stream", STREAMS, ids=lambda s: s["name"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_vector_streams_any_chunking(stream, data):
    chunks = data.draw(chunkings(whole(stream)))
    fr = make_framer(stream)
    assert run(fr, chunks) == expected(stream)
    assert fr.bytes_discarded == stream["expected_discarded_bytes"]
    assert fr.pending == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=20), st.sampled_from([14, 18]))
def test_arbitrary_bytes_never_raise_and_stay_bounded(chunks, n):
    fr = Framer(n)
    total = 0
    for c in chunks:
        for frame in fr.feed(c):
            assert frame.aorm <= 1 and frame.estop <= 1 and frame.gear <= 2
        total += len(c)
        assert fr.pending < n
        assert fr.pending <= fr.max_buffer
    # Every byte is accounted for: in a frame, discarded, or still pending.
    assert fr.frames_ok * n + fr.bytes_discarded + fr.pending == total


# Noise that cannot contain an "S" can never start a false header.
noise = st.binary(max_size=40).map(lambda b: b.replace(b"S", b"s"))
fb_frames = st.builds(Feedback, st.integers(0, 1), st.integers(0, 1), st.integers(0, 2),
                      st.integers(0, 0xFFFF), st.integers(-0x8000, 0x7FFF),
                      st.integers(0, 255), st.integers(-2 ** 31, 2 ** 31 - 1),
                      st.integers(0, 255))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(noise, fb_frames), max_size=8), noise, st.data())
def test_frames_survive_noise_and_any_chunking(items, tail, data):
    stream = b"".join(n + encode_feedback(f) for n, f in items) + tail
    chunks = data.draw(chunkings(stream))
    fr = FeedbackFramer()
    assert run(fr, chunks) == [f for _, f in items]
    assert fr.bytes_discarded == sum(len(n) for n, _ in items) + len(tail) - fr.pending


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=60), max_size=6), fb_frames, st.data())
def test_a_clean_frame_after_garbage_and_a_clean_frame_is_always_found(junk, frame, data):
    # Whatever garbage precedes it, two back-to-back frames give at least the last one
    # (the first may be swallowed by a false header that overlaps it).
    raw = encode_feedback(frame)
    stream = b"".join(junk) + raw + raw
    fr = FeedbackFramer()
    got = run(fr, data.draw(chunkings(stream)))
    assert got and got[-1] == frame


def test_several_frames_in_one_read_and_partial_kept():
    frames = [Feedback(1, 0, 0, 10 * i, -i, 1, i * 1000, i) for i in range(5)]
    raw = b"".join(encode_feedback(f) for f in frames)
    fr = FeedbackFramer()
    assert fr.feed(raw + raw[:7]) == frames
    assert fr.pending == 7
    assert fr.feed(raw[7:18]) == [frames[0]]
    assert fr.pending == 0


def test_trailing_partial_header_is_kept():
    fr = CommandFramer()
    raw = bytes.fromhex(CMD_FRAMES[1]["hex"])
    assert fr.feed(b"\x00\x01ST") == []
    assert fr.pending == 2 and fr.bytes_discarded == 2
    assert fr.feed(raw[2:]) == [Command(**CMD_FRAMES[1]["fields"])]
    assert fr.feed(b"xxS") == [] and fr.pending == 1
    assert fr.feed(b"S") == [] and fr.pending == 1  # "SS": only the last S may start a header
    assert fr.bytes_discarded == 5


def test_soft_checks_count_but_do_not_reject():
    fr = CommandFramer(brake_min=1, brake_max=150)
    bad = [Command(speed=201), Command(steer=-2001), Command(steer=2001), Command(brake=0),
           Command(brake=151), Command(speed=300, brake=200)]
    raw = b"".join(encode_command(c) for c in bad)
    assert fr.feed(raw) == bad
    assert (fr.soft_speed, fr.soft_steer, fr.soft_brake) == (2, 2, 3)
    assert fr.soft_violations == 7
    assert fr.alive_gaps == 0  # command framers do not check ALIVE by default


def test_feedback_alive_gaps_and_wrap():
    fr = FeedbackFramer()
    alives = [254, 255, 0, 1, 3, 3, 4]  # wrap ok; skip 2 -> gap; repeat 3 -> gap
    fr.feed(b"".join(encode_feedback(Feedback(1, 0, 0, 0, 0, 1, 0, a)) for a in alives))
    assert fr.alive_gaps == 2 and fr.soft_violations == 2
    fr.reset()
    fr.feed(encode_feedback(Feedback(1, 0, 0, 0, 0, 1, 0, 100)))  # first after reset: reference
    assert fr.alive_gaps == 2


def test_brake_range_follows_parameters():
    fr = FeedbackFramer(brake_min=1, brake_max=200)
    fr.feed(encode_feedback(Feedback(1, 0, 0, 0, 0, 200, 0, 0)))
    assert fr.soft_brake == 0
    fr2 = FeedbackFramer()
    fr2.feed(encode_feedback(Feedback(1, 0, 0, 0, 0, 200, 0, 0)))
    assert fr2.soft_brake == 1


def test_reset_clears_buffer_keeps_counters_unless_asked():
    fr = FeedbackFramer()
    raw = bytes.fromhex(FB_FRAMES[0]["hex"])
    fr.feed(raw + b"\x00" + raw[:10])
    assert fr.pending == 10 and fr.frames_ok == 1
    fr.reset()
    assert fr.pending == 0 and fr.frames_ok == 1
    assert fr.feed(raw[10:]) == []  # the stale half frame is gone
    fr.reset(counters=True)
    assert (fr.frames_ok, fr.bytes_discarded, fr.bytes_received) == (0, 0, 0)


def test_frame_length_must_be_known():
    with pytest.raises(Erp42Error, match="frame_len"):
        Framer(20)


def test_framer_is_fast_enough_for_a_serial_port():
    # 10 000 feedback frames (about 200 s of traffic) with noise, in 512-byte reads.
    # A per-byte Python loop takes far longer; the bound is loose for a shared CI box.
    unit = b"\x00\x0d\x0a" + encode_feedback(Feedback(1, 0, 0, 100, 710, 1, 5, 7))
    data = unit * 10000
    fr = FeedbackFramer()
    t0 = time.perf_counter()
    n = 0
    for i in range(0, len(data), 512):
        n += len(fr.feed(data[i:i + 512]))
    elapsed = time.perf_counter() - t0
    assert n == 10000 and fr.bytes_discarded == 30000
    assert elapsed < 1.0, elapsed
