"""The UDP streams between a user and the MORAI simulator, each declared once.

Each :class:`Stream` is one UDP port of the simulator's network settings and everything the
project does with it: its default port (MORAI's documented defaults), its direction, the message
classes that travel on it, and, for the ROS bridge, the topic and message type it is published on
or subscribed from (MORAI's native ROS mode's names), the queue depth, how its header is stamped and
which counters /diagnostics shows.  The ROS side (:mod:`morai_bridge.ros.udp_bridge.sim_receive`,
:mod:`morai_bridge.ros.udp_bridge.command_sender`, :mod:`morai_bridge.ros.udp_bridge.diagnostics`), the simulator
emulator (:mod:`morai_bridge.emu`), the dump tool, the generated launch files and docs and the tests
read this table; nothing else states a port or a topic.  It is plain data (type names are strings),
so it needs no ROS.

Everything that handles a stream is found by its name in tables of references, never by a name
built from a string: its converter in ``CONVERTERS`` of :mod:`morai_bridge.ros.udp_bridge.sim_to_ros`
(received) or :mod:`morai_bridge.ros.udp_bridge.ros_to_sim` (sent), the receiver's or sender's method in
their tables (``SimReceiver`` / ``CommandSender``), the emulator's packet builder in
:data:`morai_bridge.emu.sim.builders.BUILDERS` and its command handler in
:data:`morai_bridge.emu.sim.commands.COMMAND_HANDLERS`.

:func:`add` declares rows (this module declares its own with it); the modules that read the table
read it once, at import, so a row added at run time must be added before they are imported
(test/unit/project/test_add_a_stream.py does so).

``extension`` streams are our emulator's lock-step extension (:mod:`.lockstep`): the real
simulator has no such port, so they are used only when explicitly enabled (``emulator_sync``).

The newest-sample rule: a received stream stamped from its packets (``stamp=PACKET``: the packet
carries the time its sample was taken) publishes a sample only when its time is later than the last
one published (:mod:`morai_bridge.wire.sample_order`); such a stream declares the counters
:func:`ordered` gives (``reordered``, ``duplicates``, ``clock_restarts``), and test_streams.py holds
every row to it.  A stream without a time of its own publishes what comes (docs/reliability.md).

The Header rule: a received stream with a topic is published as a message type that has a
``std_msgs/Header header`` field (its first), in every morai_msgs message set (msg_sets/): the bridge
stamps it (``stamp``) and sets its frame.  ``test/unit/wire/udp/test_streams.py`` holds every row
to it against every set's files.
"""
from typing import Dict, NamedTuple, Tuple

from .. import udp
from . import lockstep

SIM_TO_USER = 'sim->user'
USER_TO_SIM = 'user->sim'

# how a received stream's header is stamped
PACKET = 'packet'     # the packet's own time (sec, nsec), unless ~stamp_source:=ros
ARRIVAL = 'arrival'   # the receive time (the packet carries no time)
# a queue of 0: the ~state_queue_size parameter (state topics: subscribers get the latest)
STATE_QUEUE = 0


class Counter(NamedTuple):
    """A counter of one stream's own meaning, shown on /diagnostics beside the common ones of every stream
    (``link.transport.StreamStats``), kept in ``StreamStats.counts[name]``."""
    name: str                  # key in StreamStats.counts
    label: str                 # its /diagnostics label
    warning: str = ''          # while it is not 0: the stream's entry WARNs with this text ({count}: the value)
    recent: bool = False       # True: WARN only while it grows (since the last report), {count}: the growth
    rate: bool = False         # True: /diagnostics also shows its rate over the last report's window


class Stream(NamedTuple):
    name: str                  # parameter prefix ('<name>_port', '<name>_topic'); the converter's name
    port: int                  # default UDP port (the simulator's default setting)
    direction: str             # SIM_TO_USER or USER_TO_SIM
    classes: Tuple[type, ...]  # message classes carried
    topic: str = ''            # default ROS topic; '' none (the services use it)
    ros_type: str = ''         # the topic's message type, 'package/Name'
    queue: int = STATE_QUEUE   # publisher (received) or subscriber (sent) queue depth
    stamp: str = ARRIVAL       # received: PACKET or ARRIVAL
    counters: Tuple[Counter, ...] = ()   # counters of its own meaning, beyond the common ones
    sim_row: str = ''          # its row in MORAI SIM's settings (the manual's message name); '' none
    event: bool = False        # True: sent only when something happens (silence is normal)
    extension: bool = False    # True: our emulator's lock-step extension, not the simulator
    versioned: bool = False    # True: a simulator version may change its default port (configuration.sim_versions)
    pubsub: int = 0            # its PUBSUB_TYPE in MORAI SIM's saved network settings; 0 none known
    pubsub_source: str = ''    # the evidence of that PUBSUB_TYPE (docs/settings.md)
    emu_hz: float = 0.0        # the emulator's default rate (option <name>_hz); 0: no rate option (events)
    emu_hz_doc: str = ''       # that option's one line of documentation
    host_clock: str = ''       # received, stamp=PACKET: the SimVersion field that is 'local' where the packet's time
                               # is the simulator host's local clock (stamped on arrival there; the time still
                               # orders the samples)
    duplicates_param: str = '' # received: the bridge parameter that publishes its duplicates too (the newest-sample
                               # rule's DUPLICATE verdict); '' none
    # its rows in the docs (tools/gen_launch.py writes the tables): docs/ros_api.md's topic table after the topic
    # and type (received: from packet, rate, notes; sent: to packet, notes), docs/emulator.md's stream table
    # after the name (received: default port, sent, packet; sent: default port, accepts)
    doc: Tuple[str, ...] = ()
    emu_doc: Tuple[str, ...] = ()
    # received, with a topic: how often MORAI's native ROS mode publishes it (docs/ros_api.md, "Native ROS mode's
    # names": the bridge publishes under native mode's name; a stream native mode lacks says so here)
    native_rate: str = ''

    @property
    def param(self):
        """Its port parameter (the bridge's and the emulator's)."""
        return self.name + '_port'

    @property
    def topic_param(self):
        """Its topic parameter (the bridge's)."""
        return self.name + '_topic'

    def stamped_by_packet(self, version):
        """Whether the bridge stamps this stream's messages with the packet's time under SimVersion ``version``."""
        return self.stamp == PACKET and not (self.host_clock and getattr(version, self.host_clock) == 'local')

    @property
    def note(self):
        """Text for parameter docs: '' or why the stream is special."""
        return ' (emulator lock-step extension, used only with emulator_sync)' if self.extension else ''


EMPTY_SLOTS = Counter('empty_slots', 'empty slots (not published)')
REORDERED = Counter('reordered', 'reordered: older than the last published (not published)',
                    '{count} datagrams older than one already published (the link reorders): not published',
                    recent=True, rate=True)
DUPLICATES = Counter('duplicates', 'duplicates: the time of the last published (not published)', rate=True)
CLOCK_RESTARTS = Counter('clock_restarts', 'clock restarts: time went back ~reorder_window or more (published)',
                         rate=True)


def ordered(*own, duplicates=DUPLICATES):
    """The counters of a stream held to the newest-sample rule (module docstring), after its ``own``."""
    return own + (REORDERED, duplicates, CLOCK_RESTARTS)

EVENTS = 100          # queue depth of the event topics: every message kept

_HEVEN_NET = 'heven-ad-2026 docs/morai/network-persistence.md'
_ONLYTI = 'Onlyti/MORAI_CPP_Networks'

STREAMS: Tuple[Stream, ...] = ()
BY_NAME: Dict[str, Stream] = {}
FROM_SIM: Tuple[Stream, ...] = ()
TO_SIM: Tuple[Stream, ...] = ()
DEFAULT_PORTS: Dict[str, int] = {}


def add(*rows: Stream) -> None:
    """Declare ``rows`` (after the ones declared so far) and rebuild the tables derived from them."""
    global STREAMS, FROM_SIM, TO_SIM
    for s in rows:
        if s.name in BY_NAME:
            raise ValueError(f'stream {s.name!r} is declared twice')
        if s.direction not in (SIM_TO_USER, USER_TO_SIM):
            raise ValueError(f'stream {s.name!r}: direction {s.direction!r}')
        STREAMS += (s,)
        BY_NAME[s.name] = s
        DEFAULT_PORTS[s.name] = s.port
    FROM_SIM = tuple(s for s in STREAMS if s.direction == SIM_TO_USER)
    TO_SIM = tuple(s for s in STREAMS if s.direction == USER_TO_SIM)


add(
    # simulator -> user
    Stream('ego_status', 909, SIM_TO_USER, (udp.EgoVehicleStatus,), 'Ego_topic', 'morai_msgs/EgoVehicleStatus',
           stamp=PACKET, counters=ordered(Counter('zero_position', 'moving at exactly (0, 0)',
                                          '{count} moving status packets at exactly (0, 0): the 25.S4 competition '
                                          'build sends its competition status (position withheld) on 909 and the '
                                          'full status on 911: sim_version:=25.S4.MolitComp03')),
           sim_row='Ego Vehicle Status',
           versioned=True, pubsub=770, pubsub_source=_HEVEN_NET + ' (MoraiInfoPublisher); '
                                                     + _ONLYTI + ' VEHICLE_STATE_PUBSUB_TYPE',
           emu_hz=50.0, emu_hz_doc='Ego Vehicle Status rate',
           native_rate="as sent: the network settings' `frameRate` (50 Hz in both public saved files; up to 120 Hz); "
                       'emulator 50 Hz',
           doc=('`#MoraiInfo$` (121/123, 161, 181, 229, 245 B)',
                'as sent (sim: up to 120 Hz)',
                'stamp = packet sec/nsec (`~stamp_source`); velocity m/s and acceleration m/s² along the '
                "vehicle's own axes as sent (x forward: velocity.x is the signed speed; "
                '[units.md](units.md#the-velocity-frame)); wheel_angle (2026 set: front_steer_angle) deg, + '
                "right as MORAI's native ROS mode (`~status_steering_sign`); the fields of each message set: "
                '"Message sets" below'),
           emu_doc=('909 (911 in 25.S4.MolitComp03)',
                    '50 Hz',
                    '`#MoraiInfo$`, data_length `ego_status_data_length` (200 → 229 B)')),
    # the competition build's second status stream (ego status layout, position and acceleration
    # zeroed), on the topic its native ROS mode uses; port 0: other builds do not send it
    # (configuration.sim_versions gives its port per version)
    Stream('competition_status', 0, SIM_TO_USER, (udp.EgoVehicleStatus,), 'Competition_topic',
           'morai_msgs/EgoVehicleStatus', stamp=PACKET, counters=ordered(),
           sim_row='Competition vehicle status (competition build)',
           versioned=True, pubsub=295, pubsub_source=_HEVEN_NET,
           emu_hz=50.0, emu_hz_doc='competition status rate (only sent where the sim_version has a competition '
                                   'status port)',
           native_rate='as sent (25.S4.MolitComp03 only: 50 Hz)',
           doc=('`#MoraiInfo$` 181 B on `~competition_status_port` (only `sim_version` 25.S4.MolitComp03: 909)',
                'as sent (50 Hz)',
                "the competition build's status: position and acceleration are 0 on the wire (withheld by the "
                'competition), the rest as `Ego_topic`'),
           emu_doc=('909 in 25.S4.MolitComp03, else not sent',
                    '50 Hz',
                    '`#MoraiInfo$` 152 → 181 B, the ego status with position, lateral/vertical velocity and '
                    'acceleration zeroed')),
    Stream('object_info', 7505, SIM_TO_USER, (udp.ObjectInfo,), 'Object_topic', 'morai_msgs/ObjectStatusList',
           stamp=PACKET, counters=ordered(EMPTY_SLOTS), sim_row='Object Info',
           pubsub=772, pubsub_source=_ONLYTI + ' OBJECT_INFO_PUBSUB_TYPE; heven file 7605 -> 7505 = their '
                                               'ObjectInfo port',
           emu_hz=50.0, emu_hz_doc='Object Info rate',
           native_rate='as sent (50 Hz in the 2024 capture); emulator 50 Hz',
           doc=('`#MoraiObjInfo$` (2152, 2160 B)',
                'as sent',
                'split by type; other ego vehicles (type −1, MORAI\'s "Ego vehicle", with a size and farther '
                'than `~own_ego_radius` from our ego status) in `npc_list`, type −1 kept; empty slots (all '
                "zero, or type −1 without a size), our own ego's slot and every type −1 slot before the first "
                'ego status are left out and counted (`empty slots`)'),
           emu_doc=('7505',
                    '50 Hz',
                    '`#MoraiObjInfo$`, 2128 → 2160 B (or 2120)')),
    Stream('traffic_light', 7502, SIM_TO_USER, (udp.GetTrafficLightStatus,), 'GetTrafficLightStatus',
           'morai_msgs/GetTrafficLightStatus', sim_row='Get Traffic Light',
           pubsub=258, pubsub_source=_ONLYTI + ' TRAFFIC_LIGHT_PUBSUB_TYPE',
           emu_hz=10.0, emu_hz_doc='Get TrafficLight Status rate (one datagram per light)',
           native_rate='as sent, one message per light (50 Hz in the 2024 capture); emulator 10 Hz per light',
           doc=('`#TrafficLight$` (48 B)',
                'as sent',
                'stamp = receive time in ROS time (no time on the wire): the wall clock, or `/clock` under '
                '`/use_sim_time`'),
           emu_doc=('7502',
                    '10 Hz, one datagram per light',
                    '`#TrafficLight$` 16 → 48 B')),
    Stream('collision', 9092, SIM_TO_USER, (udp.CollisionData,), 'CollisionData', 'morai_msgs/CollisionData',
           queue=EVENTS, stamp=PACKET, counters=ordered(EMPTY_SLOTS), event=True, sim_row='Collision Data',
           pubsub=261, pubsub_source='inferred: heven file 9091 -> 9092 = their CollisionData port',
           native_rate='as sent, periodically (40–55 Hz in the captures); emulator with every ego status',
           doc=('`#CollisionData$` (173, 181 B)',
                'as sent (the simulator sends it periodically, 40–55 Hz)',
                'one message per packet; empty slots (all zero, or obj_type −1 as 25.S4 fills them, the first '
                "with the ego's position) are not published and are counted on `/diagnostics`: a packet "
                'without a collision gives a message with no object and a zero offset; queue 100: events are '
                'not dropped'),
           emu_doc=('9092',
                    'with every ego status (as the simulator: 40-55 Hz in the 2024 captures and 25.S4)',
                    '`#CollisionData$` 148 → 181 B (or 140); slots without a collision all zero (24.R2) or '
                    "obj_type -1, the first with the ego's position (25.S4 and later)")),
    Stream('intersection', 9102, SIM_TO_USER, (udp.GetIntersectionStatus,), 'InsnStatus',
           'morai_msgs/IntersectionStatus', sim_row='Get Intersection Status',
           emu_hz=10.0, emu_hz_doc='Get Intersection Status rate (one datagram per intersection)',
           native_rate='as sent, one per intersection (50 Hz in the 2024 capture); emulator 10 Hz',
           doc=('`#IntStatus$` (37 B)',
                'as sent',
                'stamp = receive time'),
           emu_doc=('9102',
                    '10 Hz, one per intersection',
                    '`#IntStatus$` 8 → 37 B')),
    Stream('vehicle_collision', 9108, SIM_TO_USER, (udp.NpcVehicleCollision,), 'VehicleCollisionData',
           'morai_msgs/VehicleCollisionData', queue=EVENTS, event=True, sim_row='NPC Vehicle Collision',
           native_rate='while NPC vehicles collide',
           doc=('`#VehicleCollision$` (1156 B)',
                'as sent',
                'one VehicleCollision per occupied pair; queue 100'),
           emu_doc=('9108',
                    'every step while two NPC vehicles overlap',
                    '`#VehicleCollision$` 1156 B')),
    Stream('sim_status', 10326, SIM_TO_USER, (udp.SimStatus,), 'sim/process/state/msg/MoraiSimProcStatus',
           'morai_msgs/MoraiSimProcStatus', sim_row='Sim Status', emu_hz=10.0, emu_hz_doc='SimStatus rate',
           native_rate='as sent; emulator 10 Hz',
           doc=('`#SimStatus$` (145 B)',
                'as sent',
                'current_status 0x01 playing / 0x10 paused'),
           emu_doc=('10326',
                    '10 Hz',
                    '`#SimStatus$` 145 B')),
    Stream('gps', 9091, SIM_TO_USER, (udp.NmeaSentence,), 'gps', 'morai_msgs/GPSMessage',
           # the newest-sample rule on the sentences' fix time (wire.udp.nmea.GpsSamples)
           counters=ordered(Counter('no_fix', 'samples without a fix (void, or 0/0 in a blackout)'),
                            Counter('no_fix_now', 'the last position had no fix (0/1)',
                                    'no fix: the last position was void or 0/0 (a GPS blackout zone), published '
                                    'with NavSatFix status NO_FIX'),
                            duplicates=Counter('duplicates', 'duplicates: a sentence taken already (not '
                                                             'published)', rate=True)), sim_row='GPS sensor',
           versioned=True, emu_hz=10.0, emu_hz_doc='GPS rate ($GPGGA + $GPRMC, one datagram each)',
           native_rate="one per GPS sample, the sensor's `sensorPeriod` (0.05 s = 20 Hz and 0.2 s = 5 Hz in the public "
                       'saved settings; 5 Hz in the 2024 capture); emulator 10 Hz',
           doc=('NMEA `$GPGGA` / `$GPRMC` text, one sentence per datagram',
                "**one per GPS sample**, as native ROS mode: the GPS sensor's rate (its `sensorPeriod`: 20 Hz "
                'and 5 Hz in the public saved settings, 5 Hz in the 2024 capture; the emulator 10 Hz), not the '
                "datagrams' (two per sample)",
                'the sentences of one fix time (the same time field) are one sample, in either order (the 2024 '
                'capture sends RMC then GGA, the emulator GGA then RMC), published as soon as its GGA arrives, '
                'or at its first sentence from a simulator that sends no GGA; a sample whose GGA never comes '
                'is published when the next one starts (`wire/udp/nmea.GpsSamples`). A sentence whose fix time '
                "is older than the last sample's (the link overtook it), or whose text is one already taken "
                "for its time (a copy), is dropped and counted. Position and altitude are the GGA's; without a "
                "GGA in the sample, the last GGA's altitude; `status` is GGA's fix quality (RMC: 1 for `A`), 0 "
                'at position 0/0, which the simulator sends in a GPS blackout zone while still claiming a fix '
                "(docs/versions.md); stamp = arrival of the sample's first sentence"),
           emu_doc=('9091 (24.R2), 9297 (25.S4 and later)',
                    '10 Hz',
                    '`$GPGGA…` then `$GPRMC…`, one sentence per datagram, CR LF')),
    # IMU: stamped on arrival instead where the version's seconds are the host's local time (25.S4)
    Stream('imu', 9110, SIM_TO_USER, (udp.ImuData,), 'imu', 'sensor_msgs/Imu', stamp=PACKET, host_clock='imu_seconds',
           duplicates_param='imu_duplicates',
           counters=ordered(duplicates=Counter('duplicates', 'duplicates: the time of the last published (catch-up '
                                                         'bursts, the link; published only with ~imu_duplicates)',
                                               rate=True)),
           sim_row='IMU sensor',
           emu_hz=50.0, emu_hz_doc='#IMUData$ rate',
           native_rate="one per packet stamp, the sensor's `sensorPeriod` (0.02 s = 50 Hz in both public saved files); "
                       'emulator 50 Hz',
           doc=('`#IMUData$` (115 B; 107 B without time)',
                'as sent, one message per packet stamp',
                'frame `~imu_frame_id`; stamped on arrival for the 107-byte form and with `sim_version` 25.S4 '
                "(its IMU seconds are the host's local time), and when the nsec is out of range; a packet with "
                "the time of the last published (25.S4's catch-up bursts, a link's copy) is counted, not "
                'published, unless `~imu_duplicates`; one with an older time (overtaken on the link) is '
                "counted as reordered, never published (the packet's time decides even where the stamp is the "
                'arrival)'),
           emu_doc=('9110',
                    '50 Hz',
                    "`#IMUData$` 115 B with time (24.R2, 25.S4: seconds of the host's local time), 107 B "
                    'without (26.R1)')),
    Stream('sync_state', 9202, SIM_TO_USER, (lockstep.EmuSyncState,), event=True, extension=True,
           emu_doc=('9202',
                    'one reply per sync request',
                    '`#EmuSyncState$` (extension; only with `emulator_sync`)')),
    # user -> simulator (queue: of the subscriber; a control command older than the next is worthless)
    Stream('ctrl_cmd', 9093, USER_TO_SIM, (udp.EgoCtrlCmd,), 'ctrl_cmd', 'morai_msgs/CtrlCmd', queue=1,
           sim_row='Ego Ctrl Cmd',
           pubsub=771, pubsub_source='inferred: heven file EgoCtrlConfig host port 9093 = their CtrlCmd port',
           doc=('`#MoraiCtrlCmd$` (55 B, or 59 B with `~ctrl_cmd_bytes` / `sim_version` 26.R1)',
                'ctrl_mode (2, or as set by `Service_MoraiEventCmd`) and `~gear` added; steering rad (+ left) '
                "→ deg ÷ the vehicle's maximum (`~vehicle_profile`, or `~max_steering_deg` when set), clamped "
                "to ±1, × `~steering_sign` (the `sim_version`'s: +1 on 25.S4, −1 on 24.R2); pedals clamped to "
                '0..1'),
           emu_doc=('9093',
                    '`#MoraiCtrlCmd$` (23 and 27 B payload)')),
    Stream('set_traffic_light', 7607, USER_TO_SIM, (udp.SetTrafficLight,), 'SetTrafficLight',
           'morai_msgs/SetTrafficLight', queue=10, sim_row='Set Traffic Light',
           pubsub=259, pubsub_source='inferred: heven file host port 7607 = their traffic-light command port',
           doc=('`#TrafficLight$` (46 B, 47 with `~set_traffic_light_bytes`)',
                'id ≤ 12 characters'),
           emu_doc=('7607',
                    '`#TrafficLight$` (data_length 14 and legacy 15)')),
    Stream('set_intersection', 9132, USER_TO_SIM, (udp.SetIntersectionStatus,), 'InsnControl',
           'morai_msgs/IntersectionControl', queue=10, sim_row='Set Intersection',
           doc=('`#SetIntStatus$` (40 B)',
                'index must fit int16'),
           emu_doc=('9132',
                    '`#SetIntStatus$`')),
    Stream('lamps', 9097, USER_TO_SIM, (udp.LampControl,), 'lamps', 'morai_msgs/Lamps', queue=10,
           sim_row='Lamp Control',
           doc=('`#LampControl$` (33 B)',
                'turnSignal 0..2, emergencySignal 0..1'),
           emu_doc=('9097',
                    '`#LampControl$`')),
    Stream('scenario_load', 9099, USER_TO_SIM, (udp.ScenarioLoad,), 'ScenarioLoad', 'morai_msgs/ScenarioLoad',
           queue=10, sim_row='Scenario Load',
           doc=('`#ScenarioLoad$` (69 B)',
                "mapped by field name (the packet's flag order differs); a trailing `.json` is dropped"),
           emu_doc=('9099',
                    '`#ScenarioLoad$`')),
    Stream('save_sensor_data', 9105, USER_TO_SIM, (udp.SaveSensorData,), 'SaveSensorData',
           'morai_msgs/SaveSensorData', queue=10, sim_row='Save Sensor Data',
           doc=('`#SaveSensorData$` (125 B)',
                ''),
           emu_doc=('9105',
                    '`#SaveSensorData$`')),
    Stream('sensor_control', 9103, USER_TO_SIM, (udp.SensorControl,), 'SensorPosControl',
           'morai_msgs/SensorPosControl', queue=10, sim_row='Sensor Control',
           doc=('`#SensorControl$` (59 B)',
                'one packet per array entry; angles rad → deg'),
           emu_doc=('9103',
                    '`#SensorControl$`')),
    Stream('npc_ghost', 9101, USER_TO_SIM, (udp.NpcGhostCmd,), 'NpcGhostCmd', 'morai_msgs/NpcGhostCmd', queue=10,
           sim_row='NPC Ghost Cmd',
           doc=('`#NpcGhostCmd$` (1031 B)',
                '≤ 20 NPCs, unique_id must fit int8'),
           emu_doc=('9101',
                    '`#NpcGhostCmd$`')),
    Stream('multi_ego', 7604, USER_TO_SIM, (udp.MultiEgoSetting,), 'ego_setting', 'morai_msgs/MultiEgoSetting',
           queue=10, sim_row='Multi Ego Setting',
           pubsub=260, pubsub_source='inferred: heven file host port 7604 = their multi-ego command port',
           doc=('`#MultiEgoSetting$` (683 B)',
                "≤ 20 egos; ctrl_mode as MORAI's ROS manual: 1 keyboard, 16 automode (2 also accepted) → wire "
                '1 / 2; other values refused'),
           emu_doc=('7604',
                    '`#MultiEgoSetting$` (648 and legacy 920)')),
    Stream('ego_ghost', 9095, USER_TO_SIM, (udp.EgoGhostCmd,), 'GhostCtrlCmd', 'morai_msgs/GhostMessage', queue=10,
           sim_row='Ego Ghost Cmd',
           pubsub=783, pubsub_source='inferred: heven file host port 9095 = their ego-ghost command port',
           doc=('`#EgoGhostCmd$` (63 B)',
                'steering_angle deg, + right like wheel_angle → wire × `~ghost_steering_sign` (the '
                "`sim_version`'s: +1)"),
           emu_doc=('9095',
                    '`#EgoGhostCmd$`')),
    Stream('gv_direct', 9111, USER_TO_SIM, (udp.GVDirectCmd,), 'gv_direct_cmd', 'morai_msgs/GVDirectCmd', queue=10,
           sim_row='Ground Vehicle Direct Cmd',
           doc=('binary msg_type 65 (85 B)',
                '`brake` has no field on the wire and is ignored'),
           emu_doc=('9111',
                    'Ground Vehicle Direct Ctrl Cmd (binary, msg_type 65)')),
    Stream('gv_state', 9112, USER_TO_SIM, (udp.GVStateCmd,), 'gv_state_cmd', 'morai_msgs/GVStateCmd', queue=10,
           sim_row='Ground Vehicle State Cmd',
           doc=('binary msg_type 66 (41 B)',
                '`latCtrlType`, `targetSteerAngle` have no field on the wire'),
           emu_doc=('9112',
                    'Ground Vehicle State Ctrl Cmd (binary, msg_type 66)')),
    Stream('sim_control', 10508, USER_TO_SIM, (udp.SimControl,), sim_row='Sim Control',
           emu_doc=('10508',
                    '`#SimControl$`')),
    Stream('sync', 9201, USER_TO_SIM, (lockstep.EmuSyncCmd, lockstep.EmuSyncTick), extension=True,
           emu_doc=('9201',
                    '`#EmuSyncCmd$`, `#EmuSyncTick$` (extension; only with `emulator_sync`)')),
)

#: GPS and IMU are sensors: their ports are in the vehicle's sensor settings, not the network settings
SENSOR_STREAMS = ('gps', 'imu')


def stream_of_class(cls):
    """The stream that carries message class ``cls`` (None when none does)."""
    for s in STREAMS:
        if cls in s.classes:
            return s
    return None
