"""The options of morai_check_signs, declared once: :data:`PARAMS` (a Param table, which makes the
command line's options) and :class:`Options`, the NamedTuple of their values that a run
(:class:`.check_signs.SignCheck`) takes, with the same names and defaults.  Also the program's name
and its exit statuses.  No ROS; docs/check_signs.md documents every option.

A value that means "not given" stays as the default: ``abort_speed`` 0 (2 x ``speed``),
``max_run_time`` 0 (the planned time + :data:`RUN_TIME_MARGIN` s), ``status_port`` -1 (the version's),
``imu_port`` -1 (no IMU), ``ctrl_bytes`` 0 (the version's).  The command line refuses these values
typed (each option's range excludes them); a test may give a port 0 (any free port) or a
``max_run_time`` below the command line's minimum.
"""
import collections

from morai_bridge.configuration import sim_versions
from morai_bridge.configuration.params import FROM_PROFILE, FROM_VERSION, NO_IMU, Param
from morai_bridge.wire.udp import streams

__all__ = ["PARAMS", "Options", "PROG", "MAX_TEST_SPEED", "RUN_TIME_MARGIN", "EXIT_OK", "EXIT_INCONCLUSIVE",
           "EXIT_REFUSED", "EXIT_ABORTED", "EXIT_INTERRUPTED"]

PROG = "morai_check_signs"
EXIT_OK, EXIT_INCONCLUSIVE, EXIT_REFUSED, EXIT_ABORTED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: the ego's speed limit of this tool (km/h): a sign test is done at walking speed
MAX_TEST_SPEED = 10.0
#: ``max_run_time`` not given: the planned time (simulated) plus this many seconds (wall clock)
RUN_TIME_MARGIN = 20.0

_PORT = dict(minimum=1, maximum=65535, metavar="PORT")

#: the options, in the order --help lists them (the command line adds the known profiles' names to the
#: help of ``sim_version`` and ``vehicle_profile``)
PARAMS = [
    Param("sim_version", sim_versions.DEFAULT, "profile to compare with and take default ports/sizes from, "
          "a name or a YAML file", metavar="NAME|FILE"),
    Param("sim_ip", "127.0.0.1", "address of the simulator PC", metavar="IP"),
    Param("ctrl_port", streams.BY_NAME["ctrl_cmd"].port, "the simulator's Ego Ctrl Cmd port", **_PORT),
    Param("ctrl_bytes", FROM_PROFILE, "Ego Ctrl Cmd size (default: the profile's)", choices=(55, 59)),
    Param("listen_ip", "0.0.0.0", "address to receive the status (and IMU) on", metavar="IP"),
    Param("status_port", FROM_VERSION, "Ego Vehicle Status destination port (default: the profile's, e.g. 909; "
          "911 for 25.S4.MolitComp03)", **_PORT),
    Param("imu_port", NO_IMU, "also read the IMU yaw rate from this port (default: no IMU)", **_PORT),
    Param("speed", 5.0, f"target speed, km/h, at most {MAX_TEST_SPEED}", above=0.0, maximum=MAX_TEST_SPEED),
    Param("steer", 0.3, "wire steer of the steering phases, normalised", above=0.0, maximum=1.0),
    Param("accel_time", 4.0, "at most this long straight to reach the speed, s", above=0.0, maximum=20.0),
    Param("phase_time", 3.0, "duration of each steering phase, s", minimum=0.5, maximum=20.0),
    Param("settle_time", 1.0, "start of each steering phase not measured (steering response), s",
          minimum=0.0, maximum=10.0),
    Param("one_way", False, "only the positive steer phase (default: positive, then negative)"),
    Param("max_start_speed", 2.0, "refuse to start when the ego is faster, km/h", minimum=0.0, maximum=10.0),
    # 0: not given (2 x --speed); a value typed must be above 0
    Param("abort_speed", 0.0, "abort above this speed, km/h (default: 2 x --speed)",
          above=0.0, maximum=2 * MAX_TEST_SPEED),
    Param("status_timeout", 3.0, "refuse / abort when no status arrives for this long, s",
          above=0.0, maximum=60.0),
    # 0: not given (the planned time + RUN_TIME_MARGIN)
    Param("max_run_time", 0.0, "abort when the drive takes longer (wall clock), s (default: the planned time "
          "+ 20 s, 30 s with the default times)", minimum=1.0, maximum=300.0),
    Param("yes", False, "do not ask for confirmation on the terminal"),
    Param("write", "", "write the measured version profile here (only when the measurement is conclusive)",
          metavar="FILE"),
    Param("gain", False, "two more steering phases at a second steer magnitude (twice --steer, or half of it "
          "above 0.5): shows whether the steering gain is linear"),
    Param("vehicle_profile", "morai_sedan", "vehicle profile whose max_steering_deg the measured full-scale "
          "angle is compared with, and whose wheelbase serves when the status has none", metavar="NAME|FILE"),
    Param("write_vehicle", "", "write the vehicle profile with the measured max_steering_deg here (only when "
          "measured)", metavar="FILE"),
]

#: the values of :data:`PARAMS`: ``Options(speed=3.0, one_way=True)``; the defaults are the Params'
Options = collections.namedtuple("Options", [p.name for p in PARAMS], defaults=[p.default for p in PARAMS])
Options.__doc__ = "The options of a morai_check_signs run (:data:`PARAMS`: names, defaults, meaning)."
