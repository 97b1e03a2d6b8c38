"""Fuzz targets: one function per decoder, each raising AssertionError when the
decoder misbehaves on the given bytes.  Driven by atheris (fuzz/run.py, the long
run) and by a seeded mutator in the unit suite (test/unit/test_fuzz_slice.py).

Rules checked:
* udp.decode / lockstep.decode: return a message or raise DecodeError; nothing
  else escapes, and a decoded message re-encodes to bytes that decode again and
  reach a fixed point;
* the ERP-42 framers: never raise, stay bounded, count every byte either in a
  frame, as discarded, or as still pending.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'src'))

from morai_bridge.wire import lockstep, erp42, udp  # noqa: E402


def check_udp(data):
    try:
        m = udp.decode(data)
    except udp.DecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001 - the point of the check
        raise AssertionError('udp.decode raised %s: %s on %r' % (type(e).__name__, e, data[:64]))
    if isinstance(m, udp.NmeaSentence):
        return 'nmea'
    try:
        again = udp.encode(m)
    except udp.EncodeError:
        # a decoded packet whose text has bytes outside ASCII cannot be re-encoded as is: fine
        return 'decoded'
    # What we encode must decode, and normalisation must reach a fixed point after one more
    # round (a slot whose values read as all zero re-encodes as an empty slot, so the first
    # round may pack records forward; bytes are compared because NaN never equals itself).
    once = udp.encode(udp.decode(again))
    if udp.encode(udp.decode(once)) != once:
        raise AssertionError('re-encoding does not reach a fixed point for %r' % (data[:64],))
    return 'decoded'


def check_emu_sync(data):
    try:
        lockstep.decode(data)
    except udp.DecodeError:
        return 'error'
    except Exception as e:  # noqa: BLE001
        raise AssertionError('lockstep.decode raised %s: %s' % (type(e).__name__, e))
    return 'decoded'


def check_framer(data, framer_cls=erp42.FeedbackFramer):
    f = framer_cls()
    n_frames = 0
    # feed in a few chunk sizes derived from the data itself
    step = (data[0] % 7 + 1) if data else 1
    for i in range(0, len(data), step):
        n_frames += len(f.feed(data[i:i + step]))
        if f.pending >= f.frame_len:
            raise AssertionError('framer keeps %d bytes, more than a frame' % f.pending)
    if n_frames * f.frame_len + f.bytes_discarded + f.pending != len(data):
        raise AssertionError('framer lost track of bytes: %d frames, %d discarded, %d pending, %d fed'
                             % (n_frames, f.bytes_discarded, f.pending, len(data)))
    return n_frames


def check_command_framer(data):
    return check_framer(data, erp42.CommandFramer)


TARGETS = {
    'udp': check_udp,
    'lockstep': check_emu_sync,
    'erp42_feedback': check_framer,
    'erp42_command': check_command_framer,
}
