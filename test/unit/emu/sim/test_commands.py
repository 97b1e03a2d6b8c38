"""What the emulator does with each user -> simulator command (emu/sim/commands.py), over real
UDP sockets: driving modes and signs, the world's commands, SimControl, and the receive path's
counting of malformed, foreign and non-finite datagrams."""

import math

import pytest

from morai_bridge.wire import udp
from sim_peers import STEP, scenario_load


# ----------------------------------------------------------------------------- ego dynamics

def test_velocity_mode_follows_the_rate_limits(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=2, velocity=36.0)              # 10 m/s
    sim.step(250)                                        # 5 s at +1 m/s^2
    assert sim.snapshot().ego.speed_kmh == pytest.approx(18.0, abs=1e-6)
    sim.step(250)
    assert sim.snapshot().ego.speed_kmh == pytest.approx(36.0, abs=1e-6)
    sim.step(100)                                        # held, no overshoot
    assert sim.snapshot().ego.speed_kmh == pytest.approx(36.0, abs=1e-6)
    client.ctrl(cmd_type=2, velocity=0.0)
    sim.step(100)                                        # 2 s at -2 m/s^2
    assert sim.snapshot().ego.speed_kmh == pytest.approx(36.0 - 4 * 3.6, abs=1e-6)
    sim.step(200)
    s = sim.snapshot().ego
    assert s.speed_kmh == 0.0 and s.x == pytest.approx(50 + 20 + 25, abs=1e-6)
    assert s.y == pytest.approx(0.0, abs=1e-9) and s.yaw_deg == 0.0


def test_throttle_and_acceleration_modes(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=1, accel=1.0, brake=0.0)
    sim.step(50)
    v1 = sim.snapshot().ego.speed_kmh / 3.6
    assert 2.5 < v1 < 3.0                                # ~3 m/s^2 minus drag for 1 s
    assert sim.snapshot().ego.accel == 1.0
    client.ctrl(cmd_type=1, accel=0.0, brake=1.0)
    sim.step(50)
    assert sim.snapshot().ego.speed_kmh == 0.0           # 8 m/s^2 stops it, never reverses
    client.ctrl(cmd_type=3, acceleration=2.0)
    sim.step(50)
    assert sim.snapshot().ego.speed_kmh == pytest.approx(7.2, abs=1e-6)
    client.ctrl(cmd_type=3, acceleration=50.0)           # clamped to max_accel 3
    sim.step(50)
    assert sim.snapshot().ego.speed_kmh == pytest.approx(7.2 + 10.8, abs=1e-6)
    client.ctrl(cmd_type=3, acceleration=-1.0, gear=4)
    sim.step(500)
    assert sim.snapshot().ego.speed_kmh == 0.0


def test_reverse_and_neutral(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=2, velocity=10.0, gear=2)
    sim.step(200)
    s = sim.snapshot().ego
    assert s.speed_kmh == pytest.approx(-10.0, abs=1e-6) and s.x < 0 and s.gear == 2
    client.ctrl(cmd_type=2, velocity=30.0, gear=3)       # N: coasts on drag only
    sim.step(50)
    v = sim.snapshot().ego.speed_kmh
    assert -10.0 < v < -9.0


def test_positive_steer_turns_right_on_24_R2(make_sim, rx):
    sim, client = make_sim(sim_version="24.R2")
    client.ctrl(cmd_type=2, velocity=20.0, steer=0.5)
    sim.step(150)
    s = sim.snapshot().ego
    assert s.yaw_deg < -5.0 and s.y < 0 and s.yaw_rate_deg_s < 0
    status = rx.messages(udp.EgoVehicleStatus)[-1]
    assert status.steer == pytest.approx(0.5 * 36.25)   # reported with the wire sign
    assert status.yaw == pytest.approx(s.yaw_deg, abs=1e-3)
    assert status.ang_vel_z < 0
    client.ctrl(cmd_type=2, velocity=20.0, steer=-0.5)
    yaw = s.yaw_deg
    sim.step(100)
    assert sim.snapshot().ego.yaw_deg > yaw
    client.ctrl(cmd_type=2, velocity=20.0, steer=5.0)    # clamped to 1
    sim.step(1)
    assert sim.snapshot().ego.steer_deg == pytest.approx(36.25)


@pytest.mark.parametrize("version", ["25.S4", "25.S4.MolitComp03", "26.R1"])
def test_positive_steer_turns_left_on_25_S4(make_sim, rx, version):
    """25.S4: a + wire steer turns left (AISW SITE_CHECKLIST.md, measured); the status reports the
    wheel angle + right, as native ROS mode's wheel_angle (- for a left turn)."""
    sim, client = make_sim(sim_version=version, ego_status_port=rx.port)
    client.ctrl(cmd_type=2, velocity=20.0, steer=0.5)
    sim.step(150)
    s = sim.snapshot().ego
    assert s.yaw_deg > 5.0 and s.y > 0 and s.yaw_rate_deg_s > 0
    status = rx.messages(udp.EgoVehicleStatus)[-1]
    assert status.steer == pytest.approx(-0.5 * 36.25)
    assert status.ang_vel_z > 0


def test_keyboard_mode_ignores_network_commands(make_sim, rx):
    sim, client = make_sim(keyboard_mode=True)
    client.ctrl(cmd_type=2, velocity=30.0)
    sim.step(100)
    s = sim.snapshot()
    assert s.ego.speed_kmh == 0.0 and s.ego.ctrl_mode == 1
    assert s.counters["ctrl_cmd"].ignored == 1 and s.counters["ctrl_cmd"].accepted == 0
    assert rx.messages(udp.EgoVehicleStatus)[-1].ctrl_mode == 1
    # Multi Ego Setting switches ego 0 to auto; now the same command acts
    rec = udp.MultiEgoRecord(0, 5.0, 6.0, 0.0, 0.0, 0.0, 45.0, 0.0, 4, 2)
    client.send("multi_ego", udp.make(udp.MultiEgoSetting, num_of_ego=1, egos=(rec,)))
    s = sim.snapshot().ego
    assert (s.x, s.y, s.yaw_deg, s.ctrl_mode, s.gear) == (5.0, 6.0, pytest.approx(45.0), 2, 4)
    client.ctrl(cmd_type=2, velocity=30.0)
    sim.step(100)
    assert sim.snapshot().ego.speed_kmh > 5.0
    # a command that itself says keyboard (ctrl_mode 1) is not applied
    client.ctrl(cmd_type=2, velocity=0.0, ctrl_mode=1)
    assert sim.snapshot().counters["ctrl_cmd"].ignored == 2
    sim.set_ctrl_mode(1)                                 # the emulator knob
    client.ctrl(cmd_type=2, velocity=60.0)
    assert sim.snapshot().counters["ctrl_cmd"].ignored == 3


def test_p_gear_holds_still(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=1, accel=1.0, gear=1)
    sim.step(100)
    assert sim.snapshot().ego.speed_kmh == 0.0 and sim.snapshot().ego.x == 0.0
    client.ctrl(cmd_type=2, velocity=30.0, gear=4)
    sim.step(300)
    assert sim.snapshot().ego.speed_kmh > 20
    client.ctrl(cmd_type=2, velocity=30.0, gear=1)       # P while moving: braked to a stop
    sim.step(100)
    s = sim.snapshot().ego
    sim.step(100)
    assert s.speed_kmh == 0.0 and sim.snapshot().ego.x == s.x and s.gear == 1


def test_ego_ghost_teleports(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=2, velocity=36.0)
    client.send("ego_ghost", udp.make(udp.EgoGhostCmd, position_x=100.0, position_y=-20.0,
                                      rotation_z=180.0, speed=36.0, steer_angle=0.0))
    s = sim.snapshot().ego
    assert (s.x, s.y, s.yaw_deg, s.speed_kmh) == (100.0, -20.0, -180.0, pytest.approx(36.0))
    sim.step(50)
    assert sim.snapshot().ego.x == pytest.approx(90.0, abs=1e-6)


# ----------------------------------------------------------------------------- world

def test_set_traffic_light_is_reported_back(make_sim, rx):
    sim, client = make_sim(only=("traffic_light",), light_hold_s=2.0)
    sim.step(1)
    first = {m.traffic_light_index: m for m in rx.messages(udp.GetTrafficLightStatus)}
    assert set(first) == {"C119BS010007", "C119BS010008", "C119BS010021", "C119BS010022"}
    assert first["C119BS010007"].traffic_light_status == 16      # plan: green first
    assert first["C119BS010008"].traffic_light_status == 1       # opposite phase: red
    assert first["C119BS010007"].traffic_light_type == 2
    client.send("set_traffic_light", udp.make(udp.SetTrafficLight,
                                              traffic_light_index="C119BS010007",
                                              traffic_light_status=33))
    sim.step(5)
    now = {m.traffic_light_index: m.traffic_light_status
           for m in rx.messages(udp.GetTrafficLightStatus)}
    assert now["C119BS010007"] == 33 and now["C119BS010008"] == 1
    assert [lt.forced for lt in sim.snapshot().lights] == [True, False, False, False]
    sim.step(100)                                                # hold of 2 s expires
    now = {m.traffic_light_index: m.traffic_light_status
           for m in rx.messages(udp.GetTrafficLightStatus)}
    assert now["C119BS010007"] == 16
    client.send("set_traffic_light", udp.make(udp.SetTrafficLight,
                                              traffic_light_index="NOSUCHLIGHT1",
                                              traffic_light_status=1))
    assert sim.snapshot().counters["set_traffic_light"].ignored == 1


def test_set_intersection_is_reported_back(make_sim, rx):
    sim, client = make_sim(only=("intersection",))
    client.send("set_intersection", udp.make(udp.SetIntersectionStatus, intersection_index=7,
                                             intersection_status=2,
                                             intersection_status_time=5.0))
    sim.step(10)                # 10 Hz: sent on ticks 0 and 5, i.e. after 1 and 6 steps
    m = rx.messages(udp.GetIntersectionStatus)[-1]
    assert m.intersection_index == 7 and m.intersection_status == 2
    assert m.intersection_status_time == pytest.approx(5.0 + 6 * STEP, abs=1e-4)
    client.send("set_intersection", udp.make(udp.SetIntersectionStatus, intersection_index=3))
    assert sim.snapshot().counters["set_intersection"].ignored == 1


def test_scenario_load_flags_and_missing_scenario(make_sim, rx, caplog):
    sim, client = make_sim(only=("sim_status",))
    client.send("scenario_load", scenario_load("sample", delete_all=False, load_ego=False,
                                                load_npc=False, load_pedestrian=False,
                                                load_object=True, set_pause=True))
    s = sim.snapshot()
    assert sorted(o.id for o in s.objects) == [201, 202] and s.paused
    client.send("scenario_load", scenario_load("sample", delete_all=False, load_ego=False,
                                                load_npc=True, load_pedestrian=False,
                                                load_object=False))
    assert sorted(o.id for o in sim.snapshot().objects) == [1, 2, 3, 201, 202]
    assert not sim.snapshot().paused
    with caplog.at_level("ERROR"):
        client.send("scenario_load", scenario_load("no_such_scenario"))
    sim.step(1)
    status = rx.messages(udp.SimStatus)[-1]
    assert status.result == 0x37 and status.command == 0x0013
    assert "no_such_scenario" in caplog.text
    assert len(sim.snapshot().objects) == 5                     # nothing changed
    client.send("scenario_load", scenario_load("../etc/passwd"))
    assert sim.snapshot().sim_status.result == 0x37


@pytest.mark.parametrize("platform,command,result", [
    (1, 0x0002, 0x11),          # launcher command sent to the simulator
    (2, 0x0001, 0x12),          # map/vehicle select: not in the play stage
    (2, 0x0011, 0x33),          # network settings cannot be loaded
    (2, 0x0012, 0x35),          # sensor settings cannot be loaded
    (2, 0x7777, 0x12),          # unknown command
])
def test_sim_control_errors(make_sim, platform, command, result):
    sim, client = make_sim(only=())
    client.send("sim_control", udp.make(udp.SimControl, platform=platform, command=command,
                                        option="x"))
    st = sim.snapshot().sim_status
    assert (st.command_platform, st.command, st.option, st.result) == (platform, command, "x",
                                                                       result)
    assert not sim.snapshot().paused


def test_sim_control_scenario_setting(make_sim):
    sim, client = make_sim(only=())
    client.send("sim_control", udp.make(udp.SimControl, platform=2, command=0x0013,
                                        option="obstacle_ahead/%d" % (0x01 | 0x20)))
    s = sim.snapshot()
    assert s.sim_status.result == 1 and s.paused and [o.id for o in s.objects] == [1]


def test_npc_ghost_places_vehicles(make_sim, rx):
    sim, client = make_sim(only=("object_info",))
    sim.load_scenario("sample")
    recs = (udp.NpcGhostRecord(1, "2015_Kia_K5", 8.0, 1.0, 0.0, 0.0, 0.0, 90.0),
            udp.NpcGhostRecord(50, "2016_Hyundai_Ioniq", -7.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    client.send("npc_ghost", udp.make(udp.NpcGhostCmd, npcs=recs))
    sim.step(20)
    objs = {o.id: o for o in sim.snapshot().objects}
    assert (objs[1].x, objs[1].y, objs[1].yaw_deg, objs[1].ghost) == (8.0, 1.0, 90.0, True)
    assert objs[50].obj_type == 1 and objs[50].name == "2016_Hyundai_Ioniq"
    info = rx.messages(udp.ObjectInfo)[-1]
    assert [r.obj_id for r in info.objects[:2]] == [50, 1]


def test_lamps_and_sensor_control_are_stored(make_sim):
    sim, client = make_sim(only=())
    client.send("lamps", udp.make(udp.LampControl, turn_signal=2, emergency_signal=1))
    client.send("sensor_control", udp.make(udp.SensorControl, sensor_index=3, pos_x=1.0,
                                           pos_z=2.0, yaw=90.0))
    client.send("save_sensor_data", udp.make(udp.SaveSensorData))
    s = sim.snapshot()
    assert s.lamps == (2, 1) and s.sensors == {3: (1.0, 0.0, 2.0, 0.0, 0.0, 90.0)}
    assert s.counters["save_sensor_data"].accepted == 1


def test_ground_vehicle_state_command(make_sim):
    sim, client = make_sim()
    client.send("gv_state", udp.make(udp.GVStateCmd, target_longitudinal_velocity=2.0,
                                     target_angular_velocity=0.2))
    sim.step(300)
    s = sim.snapshot().ego
    assert s.speed_kmh == pytest.approx(7.2) and s.yaw_rate_deg_s == pytest.approx(
        math.degrees(0.2), rel=0.05)
    client.send("gv_direct", udp.make(udp.GVDirectCmd, steer_type=1))
    assert sim.snapshot().counters["gv_direct"].ignored == 1


# ----------------------------------------------------------------------------- robustness

BAD = [b"", b"x", b"#", b"#MoraiCtrlCmd$", b"#NoSuchHeader$" + bytes(40),
       udp.encode(udp.make(udp.EgoCtrlCmd))[:-3],
       udp.encode(udp.make(udp.EgoCtrlCmd))[:-2] + b"XX",
       b"$GPGGA,garbage*00\r\n", bytes(range(256)) * 4, b"\xff" * 3000]


def test_malformed_datagrams_are_counted_per_port(make_sim):
    sim, client = make_sim(only=("ego_status",))
    for name in sim.ports:
        for d in BAD:
            client.send_raw(name, d)
    # one well-formed message of the wrong type on every port
    lamp = udp.encode(udp.make(udp.LampControl, turn_signal=1))
    for name in sim.ports:
        client.send_raw(name, lamp if name != "lamps" else udp.encode(udp.make(udp.EgoCtrlCmd)))
    n = len(sim.ports)
    assert sim.wait_for(lambda s: sum(c.received for c in s.counters.values())
                        == n * (len(BAD) + 1), 5.0)
    s = sim.snapshot()
    for name, c in s.counters.items():
        assert c.malformed == len(BAD), (name, c)
        assert c.wrong_type == 1 and c.accepted == 0 and c.errors == 0, (name, c)
        assert c.last_error
    sim.step(5)                                   # still alive and working
    client.ctrl(cmd_type=2, velocity=10.0)
    sim.step(50)
    assert sim.snapshot().ego.speed_kmh > 0


def test_commands_from_other_hosts_are_ignored(make_sim):
    sim, client = make_sim(allowed_sender_ip="127.0.0.2")
    client.send_raw("ctrl_cmd", udp.encode(udp.make(udp.EgoCtrlCmd, ctrl_mode=2, gear=4,
                                                    cmd_type=2, velocity=30.0)))
    assert sim.wait_for(lambda s: s.counters["ctrl_cmd"].foreign == 1, 2.0)
    sim.step(50)
    s = sim.snapshot()
    assert s.ego.speed_kmh == 0.0 and s.counters["ctrl_cmd"].received == 0


def test_non_finite_commands_are_ignored(make_sim):
    sim, client = make_sim()
    client.ctrl(cmd_type=2, velocity=float("nan"))
    client.ctrl(cmd_type=9, velocity=10.0)
    sim.step(10)
    s = sim.snapshot()
    assert s.counters["ctrl_cmd"].ignored == 2 and s.ego.speed_kmh == 0.0


# ----------------------------------------------------------------------------- the handlers' table

def test_every_command_class_has_one_handler():
    """commands.COMMAND_HANDLERS holds a handler (a function, not a name) for every class of the
    user -> simulator streams (the lock-step extension's are the emulator's sync_mode)."""
    from morai_bridge.emu.sim import commands
    from morai_bridge.emu.sim.commands import COMMAND_HANDLERS
    from morai_bridge.wire.udp import streams
    assert set(COMMAND_HANDLERS) == {c for s in streams.TO_SIM if not s.extension for c in s.classes}
    for cls, handler in COMMAND_HANDLERS.items():
        assert getattr(commands, handler.__name__) is handler, cls
