"""The simulator -> user streams of the end-to-end benchmark (no ROS here).

One sample datagram per stream, built with the codec at the size the
simulator sends today, and where the packet carries a time, the byte offset
of its sec/nsec pair so a sender can write its own wall-clock time there.

Used by bench/e2e_sender.py (sends them) and bench/rospy_floor.py (builds the
same ROS messages once from them and republishes those).
"""
import datetime
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from morai_bridge.wire import udp  # noqa: E402
from morai_bridge.wire.udp import nmea, samples as udp_samples

TIME = struct.Struct("<ii")
_MARK = udp_samples.MARK   # sentinel sec/nsec used to find the offset

# name, topics the bridge publishes for it (relative to its namespace), stamp from the packet
STREAMS = [
    ("ego_status", ["Ego_topic"], True),
    ("object_info", ["Object_topic"], True),
    ("traffic_light", ["GetTrafficLightStatus"], False),
    ("collision", ["CollisionData"], True),
    ("intersection", ["InsnStatus"], False),
    ("vehicle_collision", ["VehicleCollisionData"], False),
    ("sim_status", ["sim/process/state/msg/MoraiSimProcStatus"], False),
    ("gps", ["gps", "gps/fix"], False),
    ("imu", ["imu"], True),
]
NAMES = [s[0] for s in STREAMS]
TOPICS = {s[0]: s[1] for s in STREAMS}
STAMPED = {s[0]: s[2] for s in STREAMS}


def sample_messages():
    """stream name -> codec message (sec/nsec set to a sentinel where carried)."""
    return udp_samples.per_stream()


def datagrams():
    """stream name -> (datagram bytes, offset of sec/nsec or None)."""
    out = {}
    mark = TIME.pack(*_MARK)
    for name, msg in sample_messages().items():
        data = udp.encode(msg)
        off = None
        if STAMPED[name]:
            off = data.find(mark)
            assert off > 0 and data.find(mark, off + 1) < 0, name
        out[name] = (data, off)
    assert len(out["ego_status"][0]) == 229 and len(out["object_info"][0]) == 2160
    return out


#: the GPS sentences' fix times step by this (the time field's resolution, hhmmss.s)
GPS_STEP = datetime.timedelta(milliseconds=100)


def gps_datagram(k):
    """The k-th GPS datagram of a run: the sample's GGA, its fix time one step later each.  A sentence repeated
    with the same fix time is a copy to the bridge (the newest-sample rule, wire/sample_order.py: published once),
    so a sender that repeated one sentence would measure nothing but the first."""
    m = sample_messages()["gps"]
    t = datetime.datetime(2026, 1, 1, 0, 0, 0) + k * GPS_STEP
    return nmea.encode(nmea.make_gga(t.time(), m.latitude, m.longitude, m.altitude))


def with_time(data, off, sec, nsec):
    """``data`` with the sec/nsec pair at ``off`` replaced (bytes)."""
    if off is None:
        return data
    b = bytearray(data)
    TIME.pack_into(b, off, sec, nsec)
    return bytes(b)


if __name__ == "__main__":
    for n, (d, o) in datagrams().items():
        print(f"{n:18} {len(d):5} B  time at {o}  {udp.decode(d).__class__.__name__!r}")
