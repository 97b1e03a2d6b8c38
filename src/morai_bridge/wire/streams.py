"""The UDP streams between a user and the MORAI simulator, declared once.

Each :class:`Stream` names one UDP port of the simulator's network settings:
its default port (MORAI's documented defaults), its direction and the message
classes that travel on it.  The bridge (:mod:`morai_bridge.ros.bridge_streams`),
the simulator emulator (:mod:`morai_bridge.emu`), the dump tool and the tests
build their port tables from :data:`STREAMS`; nothing else states a port.

``extension`` streams are our emulator's lock-step extension
(:mod:`.lockstep`): the real simulator has no such port, so they are used only
when explicitly enabled (``emulator_sync``).  No ROS.
"""
from typing import NamedTuple, Tuple

from . import lockstep, udp

SIM_TO_USER = 'sim->user'
USER_TO_SIM = 'user->sim'


class Stream(NamedTuple):
    name: str                 # parameter prefix: '<name>_port'
    port: int                 # default UDP port (the simulator's default setting)
    direction: str            # SIM_TO_USER or USER_TO_SIM
    classes: Tuple[type, ...]  # message classes carried
    event: bool = False       # True: sent only when something happens (silence is normal)
    extension: bool = False   # True: our emulator's lock-step extension, not the simulator

    @property
    def param(self):
        return self.name + '_port'

    @property
    def note(self):
        """Text for parameter docs: '' or why the stream is special."""
        return ' (emulator lock-step extension, used only with emulator_sync)' if self.extension else ''


STREAMS = (
    # simulator -> user
    Stream('ego_status', 909, SIM_TO_USER, (udp.EgoVehicleStatus,)),
    # the competition build's second status stream (ego status layout, position and acceleration
    # zeroed); 0: other builds do not send it (configuration.sim_versions gives its port per version)
    Stream('competition_status', 0, SIM_TO_USER, (udp.EgoVehicleStatus,)),
    Stream('object_info', 7505, SIM_TO_USER, (udp.ObjectInfo,)),
    Stream('traffic_light', 7502, SIM_TO_USER, (udp.GetTrafficLightStatus,)),
    Stream('collision', 9092, SIM_TO_USER, (udp.CollisionData,), event=True),
    Stream('intersection', 9102, SIM_TO_USER, (udp.GetIntersectionStatus,)),
    Stream('vehicle_collision', 9108, SIM_TO_USER, (udp.NpcVehicleCollision,), event=True),
    Stream('sim_status', 10326, SIM_TO_USER, (udp.SimStatus,)),
    Stream('gps', 9091, SIM_TO_USER, (udp.NmeaSentence,)),
    Stream('imu', 9110, SIM_TO_USER, (udp.ImuData,)),
    Stream('sync_state', 9202, SIM_TO_USER, (lockstep.EmuSyncState,), event=True, extension=True),
    # user -> simulator
    Stream('ctrl_cmd', 9093, USER_TO_SIM, (udp.EgoCtrlCmd,)),
    Stream('set_traffic_light', 7607, USER_TO_SIM, (udp.SetTrafficLight,)),
    Stream('set_intersection', 9132, USER_TO_SIM, (udp.SetIntersectionStatus,)),
    Stream('lamps', 9097, USER_TO_SIM, (udp.LampControl,)),
    Stream('scenario_load', 9099, USER_TO_SIM, (udp.ScenarioLoad,)),
    Stream('save_sensor_data', 9105, USER_TO_SIM, (udp.SaveSensorData,)),
    Stream('sensor_control', 9103, USER_TO_SIM, (udp.SensorControl,)),
    Stream('npc_ghost', 9101, USER_TO_SIM, (udp.NpcGhostCmd,)),
    Stream('multi_ego', 7604, USER_TO_SIM, (udp.MultiEgoSetting,)),
    Stream('ego_ghost', 9095, USER_TO_SIM, (udp.EgoGhostCmd,)),
    Stream('gv_direct', 9111, USER_TO_SIM, (udp.GVDirectCmd,)),
    Stream('gv_state', 9112, USER_TO_SIM, (udp.GVStateCmd,)),
    Stream('sim_control', 10508, USER_TO_SIM, (udp.SimControl,)),
    Stream('sync', 9201, USER_TO_SIM, (lockstep.EmuSyncCmd, lockstep.EmuSyncTick), extension=True),
)

#: each stream's row in MORAI SIM's settings (the manual's message name), and the settings page that
#: has it: the network settings, except GPS and IMU, which are sensors (their ports are in the sensor
#: settings of the vehicle).  For the port tables of the docs (tools/gen_launch.py ports).
SIM_ROWS = {
    'ego_status': 'Ego Vehicle Status', 'competition_status': 'Competition vehicle status (competition build)',
    'object_info': 'Object Info', 'traffic_light': 'Get Traffic Light', 'collision': 'Collision Data',
    'intersection': 'Get Intersection Status', 'vehicle_collision': 'NPC Vehicle Collision',
    'sim_status': 'Sim Status', 'gps': 'GPS sensor', 'imu': 'IMU sensor', 'ctrl_cmd': 'Ego Ctrl Cmd',
    'set_traffic_light': 'Set Traffic Light', 'set_intersection': 'Set Intersection',
    'lamps': 'Lamp Control', 'scenario_load': 'Scenario Load', 'save_sensor_data': 'Save Sensor Data',
    'sensor_control': 'Sensor Control', 'npc_ghost': 'NPC Ghost Cmd', 'multi_ego': 'Multi Ego Setting',
    'ego_ghost': 'Ego Ghost Cmd', 'gv_direct': 'Ground Vehicle Direct Cmd', 'gv_state': 'Ground Vehicle State Cmd',
    'sim_control': 'Sim Control',
}
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
