"""Sample messages of the UDP codec, for benchmarks, tests and fuzz seeds (no ROS here).

:func:`per_variant` gives one message per packet variant of :data:`udp.VARIANTS` with a
distinct non-zero value in every field; :func:`per_stream` gives one realistic message per
simulator -> user stream at the size the simulator sends today (20 occupied object slots,
two collisions, a GGA sentence, ...), with ``sec``/``nsec`` set to :data:`MARK` where the
packet carries a time, so a sender can find those bytes and write its own clock there.  A stream
written here by hand has its realistic sample; any other stream of the rows (one added later, whose
class no stream here carries) gets its layout's current variant filled as :func:`per_variant` fills
it, so a new stream needs no edit here.
"""
import datetime

from morai_bridge.wire.udp import nmea, streams
from morai_bridge.wire import udp

MARK = (0x1A2B3C4D, 0x0E0D0C0B)     # the sentinel sec/nsec of per_stream()


def _filled(info, floats):
    """A message of variant ``info`` with a distinct non-zero value in every field."""
    fields = {}
    for f in info.fields:
        if f.const is not None:
            continue
        if f.is_text:
            fields[f.name] = 'A219BS010391'[:f.size - 1]
        elif f.letter == '?':
            fields[f.name] = True
        elif f.letter in 'fd':
            fields[f.name] = tuple(next(floats) for _ in range(f.count)) if f.is_array else next(floats)
        else:
            fields[f.name] = 1
    if info.records is not None:
        rs = info.records
        rec = rs.record(**{f.name: ('L%d' % i) if f.is_text else i + 1 for i, f in enumerate(rs.fields)})
        fields[rs.attr] = tuple((rec,) * rs.group if rs.group > 1 else rec for _ in range(rs.count // rs.group))
    return udp.make(info.cls, info.data_length, **fields)


def per_variant():
    """[(label, message)]: one message per variant (non-zero values everywhere), then a GGA."""
    floats = iter([0.5 + i * 0.25 for i in range(1000)])
    out = []
    for info in udp.VARIANTS:
        variant = info.data_length if info.header else f'msg_type {info.msg_type}'
        out.append((f'{info.cls.__name__} {variant}', _filled(info, floats)))
    out.append(('NmeaSentence GGA', nmea.make_gga(datetime.time(22, 30, 47, 500000), 37.24006, 126.77396, 29.1)))
    return out


def _objects():
    """20 occupied slots: 12 NPC vehicles, 5 pedestrians, 3 obstacles."""
    out = []
    for i in range(20):
        t = 1 if i < 12 else (0 if i < 17 else 2)
        out.append(udp.ObjectRecord(
            obj_id=100 + i, obj_type=t, pos_x=10.0 + 3.5 * i, pos_y=-4.0 + 0.5 * i, pos_z=0.25,
            heading=90.0 - i, size_x=4.6 if t == 1 else 0.6, size_y=1.9 if t == 1 else 0.6,
            size_z=1.5, overhang=0.9, wheelbase=2.8, rear_overhang=0.9, vel_x=30.0 + i,
            vel_y=0.5, vel_z=0.0, acc_x=0.2, acc_y=0.0, acc_z=0.0,
            link_id='A219BS0103%02d' % i if t == 1 else ''))
    return tuple(out)


def _npc_record(i):
    return udp.NpcCollisionRecord(obj_type=1, obj_id=200 + i, pos_x=5.0 * i, pos_y=1.0, pos_z=0.0,
                                  heading=45.0, size_x=4.6, size_y=1.9, size_z=1.5, vel_x=20.0,
                                  vel_y=0.0, vel_z=0.0, acc_x=-3.0, acc_y=0.0, acc_z=0.0)


def per_stream():
    """stream name (wire.streams.FROM_SIM) -> codec message, sec/nsec = MARK where carried."""
    sec, nsec = MARK
    out = {
        'ego_status': udp.make(
            udp.EgoVehicleStatus, 200, sec=sec, nsec=nsec, ctrl_mode=2, gear=4, signed_vel=36.0,
            map_data_id=12, accel=0.3, brake=0.0, size_x=4.6, size_y=1.9, size_z=1.5, overhang=0.9,
            wheelbase=2.8, rear_overhang=0.9, pos_x=120.5, pos_y=-33.25, pos_z=0.5, roll=0.1,
            pitch=-0.2, yaw=87.0, vel_x=1.0, vel_y=35.9, vel_z=0.0, ang_vel_x=0.0, ang_vel_y=0.0,
            ang_vel_z=1.5, acc_x=0.4, acc_y=0.1, acc_z=0.0, steer=2.5, link_id='A219BS010391',
            tire_lateral_force_fl=100.0, tire_lateral_force_fr=101.0, tire_lateral_force_rl=90.0,
            tire_lateral_force_rr=91.0, side_slip_angle_fl=0.1, side_slip_angle_fr=0.1,
            side_slip_angle_rl=0.05, side_slip_angle_rr=0.05, tire_cornering_stiffness_fl=1000.0,
            tire_cornering_stiffness_fr=1000.0, tire_cornering_stiffness_rl=1100.0,
            tire_cornering_stiffness_rr=1100.0),
        'object_info': udp.make(udp.ObjectInfo, 2128, sec=sec, nsec=nsec, objects=_objects()),
        'traffic_light': udp.make(udp.GetTrafficLightStatus, traffic_light_index='C119BS010007',
                                  traffic_light_type=1, traffic_light_status=16),
        'collision': udp.make(udp.CollisionData, 148, sec=sec, nsec=nsec, records=tuple(
            udp.CollisionRecord(obj_type=1, obj_id=300 + i, pos_x=12.0 + i, pos_y=3.0, pos_z=0.0,
                                global_offset_x=302459.9, global_offset_y=4122635.5,
                                global_offset_z=28.6) for i in range(2))),
        'intersection': udp.make(udp.GetIntersectionStatus, intersection_index=7,
                                 intersection_status=1, intersection_status_time=3.5),
        'vehicle_collision': udp.make(udp.NpcVehicleCollision, pairs=tuple(
            (_npc_record(2 * k), _npc_record(2 * k + 1)) for k in range(2))),
        'sim_status': udp.make(udp.SimStatus, platform=2, stage=2, status=1, command_platform=2,
                               command=3, command_option='', result=1),
        'gps': nmea.make_gga(datetime.time(22, 30, 47, 500000), 37.24006, 126.77396, 29.1),
        'imu': udp.make(udp.ImuData, sec=sec, nsec=nsec, ori_w=0.99, ori_x=0.01, ori_y=0.02,
                        ori_z=0.1, ang_vel_x=0.001, ang_vel_y=0.002, ang_vel_z=0.05,
                        lin_acc_x=0.3, lin_acc_y=0.1, lin_acc_z=9.81),
    }
    sampled = {type(m) for m in out.values()}
    for s in streams.FROM_SIM:
        cls = s.classes[0]
        if s.name in out or s.extension or cls in sampled:
            continue
        info = next(v for v in udp.variants_of(cls) if v.data_length == cls.CURRENT_DATA_LENGTH)
        m = _filled(info, iter([0.5 + i * 0.25 for i in range(1000)]))
        out[s.name] = m._replace(sec=sec, nsec=nsec) if getattr(m, 'sec', None) is not None else m
        sampled.add(cls)
    return out
