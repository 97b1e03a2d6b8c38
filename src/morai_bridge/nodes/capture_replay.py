"""capture_replay: a pcap/pcapng of MORAI traffic becomes the bridge's ROS topics.

Each UDP datagram of the file goes through the same decoding path as live
traffic (``SimReceiver.feed``), routed by its destination port with the bridge's
``~<stream>_port`` parameters (defaults: those of ``~sim_version``, the release
that made the capture; datagrams to other ports are counted, and the summary
names the version or port parameter that would decode them).  Timing follows
the capture at ``~rate`` (1 = recorded speed, 0 = as fast as possible); with
``~publish_clock`` the node publishes /clock from the capture's own timestamps,
so ``use_sim_time`` consumers see recorded time and the pacing never depends on
ROS time.  Headers without a packet time get the capture's record time
(``~arrival_time``).

A capture taken with a port filter (``udp port 7505``) holds only the first IP
fragment of each 2160-byte Object Info.  Such a datagram is replayed with the
records its first fragment holds whole (13 of the 20 slots, which are nearest
first) and the later slots empty: the ObjectStatusList is published, missing
only the farthest objects.  They are counted (``truncated`` in the summary)
and a warning, logged once, names the capture filter that keeps every fragment.
"""
import os
import time

import rospy

from morai_bridge.link import transport
from morai_bridge.ros.recordings.capture_player import CapturePlayer
from morai_bridge.configuration.params import Param, ParamError
from morai_bridge.ros.params import init_node, load
from morai_bridge.ros.supervision import NodeSupervisor
from morai_bridge.ros.udp_bridge.sim_receive import RECEIVE_PARAMS, VERSION_PARAMS
from morai_bridge.configuration.maps import MapError
from morai_bridge.configuration.sim_versions import VersionError
from morai_bridge.wire import capture

PARAMS = [
    Param('file', '', 'pcap or pcapng file of MORAI UDP traffic (required)'),
    Param('rate', 1.0, 'replay speed: 1 = as recorded, 2 = twice as fast, 0 = as fast as possible', minimum=0.0),
    Param('loop', False, 'start again at the end of the file'),
    Param('start_offset', 0.0, 'skip this many seconds at the start of the capture [s]', minimum=0.0),
    Param('publish_clock', False, 'publish /clock from the capture timestamps'),
    Param('sim_ip', '0.0.0.0', 'only replay datagrams from this source address (0.0.0.0: all)'),
    Param('start_delay', 0.0, 'wait this long before replaying, e.g. for subscribers to connect [s]', minimum=0.0),
    Param('progress_period', 5.0, 'seconds between progress lines (0: none)', minimum=0.0),
    Param('arrival_time', 'capture', 'stamp of packets without a time of their own (all packets with stamp_source '
          'ros): capture (when the capture recorded them: one timeline with the packet times and /clock) or now '
          '(the replay\'s clock)', choices=('capture', 'now')),
] + VERSION_PARAMS + RECEIVE_PARAMS


def input_path(path, cwd=None, caller=None):
    """``path`` as an absolute path.  A relative one is looked for where the node runs (``cwd``) and
    where the user typed the command (``caller``: ``$PWD``, which roslaunch passes on while it starts
    nodes in ~/.ros); found nowhere: :class:`ParamError` naming both places."""
    if os.path.isabs(path):
        return path
    cwd = os.getcwd() if cwd is None else cwd
    caller = os.environ.get('PWD', '') if caller is None else caller
    places = [caller] if caller and caller != cwd else []
    places.append(cwd)
    for d in places:
        if os.path.exists(os.path.join(d, path)):
            return os.path.join(d, path)
    raise ParamError('~file=%s: no such file in %s; give an absolute path (roslaunch starts nodes in %s)'
                     % (path, ' nor in '.join(places), cwd))


def main(argv=None):
    init_node('capture_replay', PARAMS)
    try:
        cfg = load(PARAMS)
        if not cfg.file:
            raise ParamError('~file is required: the pcap/pcapng file to replay')
        cfg['file'] = input_path(cfg.file)
        supervisor = NodeSupervisor('capture_replay', cfg)
        replay = CapturePlayer(cfg, supervisor)
        # open once now so a bad path fails fast with a clear message
        next(iter(capture.read_capture(cfg.file)), None)
    except (ParamError, VersionError, MapError, transport.TransportError, capture.CaptureError, OSError) as e:
        rospy.logfatal('capture_replay: %s', e)
        raise SystemExit(2)
    if cfg.start_delay:
        time.sleep(cfg.start_delay)
    while True:
        if not replay.run_once():
            break
        rospy.loginfo(replay.summary())
        if not cfg.loop:
            break
    rospy.loginfo('capture_replay: finished; staying up so latched state can be inspected (Ctrl-C to quit)')
    raise SystemExit(supervisor.spin())


if __name__ == '__main__':
    main()
