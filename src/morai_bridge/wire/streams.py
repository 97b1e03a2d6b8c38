"""The UDP streams between a user and the MORAI simulator, each declared once.

Each :class:`Stream` is one UDP port of the simulator's network settings and everything the
project does with it: its default port (MORAI's documented defaults), its direction, the message
classes that travel on it, and, for the ROS bridge, the topic and message type it is published on
or subscribed from (MORAI's native ROS mode's names), the queue depth, how its header is stamped and
which counters /diagnostics shows.  The ROS side (:mod:`morai_bridge.ros.sim_receive`,
:mod:`morai_bridge.ros.command_sender`, :mod:`morai_bridge.ros.bridge_diagnostics`), the simulator
emulator (:mod:`morai_bridge.emu`), the dump tool, the generated launch files and docs and the tests
read this table; nothing else states a port or a topic.  It is plain data (type names are strings),
so it needs no ROS.

The converter of a stream is the function of its name in :mod:`morai_bridge.ros.sim_to_ros`
(received) or :mod:`morai_bridge.ros.ros_to_sim` (sent), unless ``convert`` names another.

``extension`` streams are our emulator's lock-step extension (:mod:`.lockstep`): the real
simulator has no such port, so they are used only when explicitly enabled (``emulator_sync``).
"""
from typing import NamedTuple, Tuple

from . import lockstep, udp

SIM_TO_USER = 'sim->user'
USER_TO_SIM = 'user->sim'

# how a received stream's header is stamped
PACKET = 'packet'     # the packet's own time (sec, nsec), unless ~stamp_source:=ros
ARRIVAL = 'arrival'   # the receive time (the packet carries no time)
# a queue of 0: the ~state_queue_size parameter (state topics: subscribers get the latest)
STATE_QUEUE = 0


class Stream(NamedTuple):
    name: str                  # parameter prefix ('<name>_port', '<name>_topic'); the converter's name
    port: int                  # default UDP port (the simulator's default setting)
    direction: str             # SIM_TO_USER or USER_TO_SIM
    classes: Tuple[type, ...]  # message classes carried
    topic: str = ''            # default ROS topic; '' none (the services use it)
    ros_type: str = ''         # the topic's message type, 'package/Name'
    queue: int = STATE_QUEUE   # publisher (received) or subscriber (sent) queue depth
    stamp: str = ARRIVAL       # received: PACKET or ARRIVAL
    counters: Tuple[Tuple[str, str], ...] = ()   # (StreamStats attribute, /diagnostics label) beyond the common
    convert: str = ''          # the converter's name when it is not the stream's
    sim_row: str = ''          # its row in MORAI SIM's settings (the manual's message name); '' none
    event: bool = False        # True: sent only when something happens (silence is normal)
    extension: bool = False    # True: our emulator's lock-step extension, not the simulator

    @property
    def param(self):
        return self.name + '_port'

    @property
    def converter(self):
        """The name of the stream's converter function (see the module docstring)."""
        return self.convert or self.name

    @property
    def note(self):
        """Text for parameter docs: '' or why the stream is special."""
        return ' (emulator lock-step extension, used only with emulator_sync)' if self.extension else ''


EMPTY_SLOTS = ('empty_slots', 'empty slots (not published)')
EVENTS = 100          # queue depth of the event topics: every message kept

STREAMS = (
    # simulator -> user
    Stream('ego_status', 909, SIM_TO_USER, (udp.EgoVehicleStatus,), 'Ego_topic', 'morai_msgs/EgoVehicleStatus',
           stamp=PACKET, counters=(('zero_position', 'moving at exactly (0, 0)'),), sim_row='Ego Vehicle Status'),
    # the competition build's second status stream (ego status layout, position and acceleration
    # zeroed), on the topic its native ROS mode uses; port 0: other builds do not send it
    # (configuration.sim_versions gives its port per version)
    Stream('competition_status', 0, SIM_TO_USER, (udp.EgoVehicleStatus,), 'Competition_topic',
           'morai_msgs/EgoVehicleStatus', stamp=PACKET, sim_row='Competition vehicle status (competition build)'),
    Stream('object_info', 7505, SIM_TO_USER, (udp.ObjectInfo,), 'Object_topic', 'morai_msgs/ObjectStatusList',
           stamp=PACKET, counters=(EMPTY_SLOTS,), sim_row='Object Info'),
    Stream('traffic_light', 7502, SIM_TO_USER, (udp.GetTrafficLightStatus,), 'GetTrafficLightStatus',
           'morai_msgs/GetTrafficLightStatus', sim_row='Get Traffic Light'),
    Stream('collision', 9092, SIM_TO_USER, (udp.CollisionData,), 'CollisionData', 'morai_msgs/CollisionData',
           queue=EVENTS, stamp=PACKET, counters=(EMPTY_SLOTS,), event=True, sim_row='Collision Data'),
    Stream('intersection', 9102, SIM_TO_USER, (udp.GetIntersectionStatus,), 'InsnStatus',
           'morai_msgs/IntersectionStatus', sim_row='Get Intersection Status'),
    Stream('vehicle_collision', 9108, SIM_TO_USER, (udp.NpcVehicleCollision,), 'VehicleCollisionData',
           'morai_msgs/VehicleCollisionData', queue=EVENTS, event=True, sim_row='NPC Vehicle Collision'),
    Stream('sim_status', 10326, SIM_TO_USER, (udp.SimStatus,), 'sim/process/state/msg/MoraiSimProcStatus',
           'morai_msgs/MoraiSimProcStatus', sim_row='Sim Status'),
    Stream('gps', 9091, SIM_TO_USER, (udp.NmeaSentence,), 'gps', 'morai_msgs/GPSMessage',
           counters=(('no_fix', 'samples without a fix (void, or 0/0 in a blackout)'),), sim_row='GPS sensor'),
    # IMU: stamped on arrival instead where the version's seconds are the host's local time
    Stream('imu', 9110, SIM_TO_USER, (udp.ImuData,), 'imu', 'sensor_msgs/Imu', stamp=PACKET,
           counters=(('duplicates', 'duplicates (catch-up bursts; not published)'),), sim_row='IMU sensor'),
    Stream('sync_state', 9202, SIM_TO_USER, (lockstep.EmuSyncState,), event=True, extension=True),
    # user -> simulator (queue: of the subscriber; a control command older than the next is worthless)
    Stream('ctrl_cmd', 9093, USER_TO_SIM, (udp.EgoCtrlCmd,), 'ctrl_cmd', 'morai_msgs/CtrlCmd', queue=1,
           sim_row='Ego Ctrl Cmd'),
    Stream('set_traffic_light', 7607, USER_TO_SIM, (udp.SetTrafficLight,), 'SetTrafficLight',
           'morai_msgs/SetTrafficLight', queue=10, sim_row='Set Traffic Light'),
    Stream('set_intersection', 9132, USER_TO_SIM, (udp.SetIntersectionStatus,), 'InsnControl',
           'morai_msgs/IntersectionControl', queue=10, sim_row='Set Intersection'),
    Stream('lamps', 9097, USER_TO_SIM, (udp.LampControl,), 'lamps', 'morai_msgs/Lamps', queue=10,
           sim_row='Lamp Control'),
    Stream('scenario_load', 9099, USER_TO_SIM, (udp.ScenarioLoad,), 'ScenarioLoad', 'morai_msgs/ScenarioLoad',
           queue=10, sim_row='Scenario Load'),
    Stream('save_sensor_data', 9105, USER_TO_SIM, (udp.SaveSensorData,), 'SaveSensorData',
           'morai_msgs/SaveSensorData', queue=10, sim_row='Save Sensor Data'),
    Stream('sensor_control', 9103, USER_TO_SIM, (udp.SensorControl,), 'SensorPosControl',
           'morai_msgs/SensorPosControl', queue=10, sim_row='Sensor Control'),
    Stream('npc_ghost', 9101, USER_TO_SIM, (udp.NpcGhostCmd,), 'NpcGhostCmd', 'morai_msgs/NpcGhostCmd', queue=10,
           sim_row='NPC Ghost Cmd'),
    Stream('multi_ego', 7604, USER_TO_SIM, (udp.MultiEgoSetting,), 'ego_setting', 'morai_msgs/MultiEgoSetting',
           queue=10, sim_row='Multi Ego Setting'),
    Stream('ego_ghost', 9095, USER_TO_SIM, (udp.EgoGhostCmd,), 'GhostCtrlCmd', 'morai_msgs/GhostMessage', queue=10,
           sim_row='Ego Ghost Cmd'),
    Stream('gv_direct', 9111, USER_TO_SIM, (udp.GVDirectCmd,), 'gv_direct_cmd', 'morai_msgs/GVDirectCmd', queue=10,
           sim_row='Ground Vehicle Direct Cmd'),
    Stream('gv_state', 9112, USER_TO_SIM, (udp.GVStateCmd,), 'gv_state_cmd', 'morai_msgs/GVStateCmd', queue=10,
           sim_row='Ground Vehicle State Cmd'),
    Stream('sim_control', 10508, USER_TO_SIM, (udp.SimControl,), sim_row='Sim Control'),
    Stream('sync', 9201, USER_TO_SIM, (lockstep.EmuSyncCmd, lockstep.EmuSyncTick), extension=True),
)

#: GPS and IMU are sensors: their ports are in the vehicle's sensor settings, not the network settings
SENSOR_STREAMS = ('gps', 'imu')

BY_NAME = {s.name: s for s in STREAMS}
FROM_SIM = tuple(s for s in STREAMS if s.direction == SIM_TO_USER)
TO_SIM = tuple(s for s in STREAMS if s.direction == USER_TO_SIM)
DEFAULT_PORTS = {s.name: s.port for s in STREAMS}


def stream_of_class(cls):
    """The stream that carries message class ``cls`` (None when none does)."""
    for s in STREAMS:
        if cls in s.classes:
            return s
    return None
