#!/usr/bin/python3
"""The "rospy floor" of the end-to-end benchmark: the least a rospy node can do per datagram.

Usage: rospy_floor.py --ports '{"ego_status": 40001, ...}' [__ns:=NS] [__name:=NAME]

Binds the same receive ports the bridge would (127.0.0.1), and on each
datagram republishes a message built once at start-up (the bridge's own
conversion of the same sample packet, so type and size are the bridge's), with
only the header stamp set: from the packet's sec/nsec, read with one
struct.unpack_from, for the streams that carry a time; rospy.Time.now() for
the others (as the bridge does).  No decoding, no validation.  Topic names and
publisher queue depths are the bridge's, so the difference between the two is
the bridge's own cost.
"""
import json
import selectors
import socket

import roslib.message
import rospy
from sensor_msgs.msg import NavSatFix

import e2e_streams
from morai_bridge.configuration.params import Param, parse_args
from morai_bridge.ros.udp_bridge import sim_to_ros as conv
from morai_bridge.wire.udp import streams
from morai_bridge.wire import udp


def prebuilt():
    """stream name -> list of messages to publish for it (same objects every time)."""
    t = rospy.Time(1, 0)
    out = {}
    for name, (data, _) in e2e_streams.datagrams().items():
        w = udp.decode(data)
        if name == "ego_status":
            m = [conv.ego_status(w, t, "map")]
        elif name == "object_info":
            m = [conv.object_info(w, t, "map")]
        elif name == "traffic_light":
            m = [conv.traffic_light(w, t, "map")]
        elif name == "collision":
            m = [conv.collision(w, t, "map")]
        elif name == "intersection":
            m = [conv.intersection(w, t, "map")]
        elif name == "vehicle_collision":
            m = [conv.vehicle_collision(w, t, "map")]
        elif name == "sim_status":
            m = [conv.sim_status(w, t, rospy.Time())]
        elif name == "gps":
            m = list(conv.gps(w, t, "gps"))   # GPSMessage, NavSatFix (sharing one header)
        elif name == "imu":
            m = [conv.imu(w, t, "imu")]
        out[name] = m
    return out


class Floor:
    """The floor's sockets and publishers; :meth:`poll` is one round of its receive loop.

    ``ports``: stream name -> UDP port on 127.0.0.1; ``queue``: None (the bridge's depths),
    'sync' or a depth; ``ns``: prefix of the topic names ('' = the node's namespace)."""

    def __init__(self, ports, queue=None, ns=""):
        msgs = prebuilt()
        grams = e2e_streams.datagrams()
        self.sel = sel = selectors.DefaultSelector()
        self.sockets = []
        for name, port in ports.items():
            stream = streams.BY_NAME[name]
            topic, rtype = stream.topic, roslib.message.get_message_class(stream.ros_type)
            if queue is None:
                depth, fix_depth = stream.queue or 1, 1
            else:
                depth = fix_depth = None if queue == "sync" else int(queue)
            pubs = [rospy.Publisher(ns + topic, rtype, queue_size=depth)]
            if name == "gps":
                pubs.append(rospy.Publisher(ns + "gps/fix", NavSatFix, queue_size=fix_depth))
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            s.bind(("127.0.0.1", int(port)))
            s.setblocking(False)
            self.sockets.append(s)
            header = msgs[name][0].header
            pairs = [(p.publish, m) for p, m in zip(pubs, msgs[name])]
            sel.register(s, selectors.EVENT_READ, (s.recv, grams[name][1], header, pairs))

    def poll(self, timeout, unpack_from=e2e_streams.TIME.unpack_from, Time=rospy.Time, now=rospy.Time.now):
        for key, _ in self.sel.select(timeout):
            recv, off, header, pairs = key.data
            while True:
                try:
                    data = recv(65535)
                except (BlockingIOError, InterruptedError):
                    break
                if off is not None:
                    header.stamp = Time(*unpack_from(data, off))
                else:
                    header.stamp = now()
                for publish, m in pairs:
                    publish(m)


def main():
    a = parse_args([
        Param("ports", None, "JSON: stream name -> UDP port on 127.0.0.1", required=True, metavar="PORTS"),
        Param("queue", None, "publisher queue depth of every topic (default: the bridge's, 1 or 100); "
              "'sync': queue_size=None, rospy's synchronous publishing (experiments)", metavar="QUEUE"),
    ], rospy.myargv()[1:])
    rospy.init_node("rospy_floor")
    floor = Floor(json.loads(a.ports), a.queue)
    poll = floor.poll
    while not rospy.is_shutdown():
        poll(0.2)


if __name__ == "__main__":
    main()
