"""morai_check_signs' options (selftest/check_options.py): one declaration, the Param table, for the
command line and the run; the values that mean "not given" resolved by the run as the docs say."""
import io

import pytest

from morai_bridge.configuration import sim_versions
from morai_bridge.selftest import check_signs as cs
from morai_bridge.selftest import check_signs_cli as cli
from morai_bridge.selftest.check_options import PARAMS, RUN_TIME_MARGIN, Options


def test_the_options_are_the_param_table():
    assert Options._fields == tuple(p.name for p in PARAMS)
    assert Options() == tuple(p.default for p in PARAMS)
    with pytest.raises(TypeError):
        Options(speed_kmh=5.0)          # the one set of names: the command line's


def test_the_command_line_gives_the_same_options():
    assert [p.name for p in cli.options()] == list(Options._fields)
    assert Options(**vars(cli.build_parser().parse_args([]))) == Options()
    args = cli.build_parser().parse_args(["--speed", "3", "--one-way", "--max-run-time", "12"])
    assert Options(**vars(args)) == Options(speed=3.0, one_way=True, max_run_time=12.0)


def test_the_help_names_the_known_profiles():
    docs = {p.name: p.doc for p in cli.options()}
    for name in sim_versions.available(cli.version_dir()):
        assert name in docs["sim_version"]
    assert "morai_sedan" in docs["vehicle_profile"]


def check_of(**kw):
    kw.setdefault("listen_ip", "127.0.0.1")
    kw.setdefault("status_port", 0)
    return cs.SignCheck(Options(**kw), sim_versions.load_version("25.S4"), out=io.StringIO())


@pytest.mark.parametrize("kw, run_time, abort_speed", [
    ({}, 30.0, 10.0),                                           # docs/check_signs.md: 30 s, 2 x --speed
    ({"phase_time": 4.0, "gain": True, "speed": 4.0}, 4.0 + 4 * 4.0 + RUN_TIME_MARGIN, 8.0),
    ({"one_way": True}, 4.0 + 3.0 + RUN_TIME_MARGIN, 10.0),
    ({"max_run_time": 12.0, "abort_speed": 7.0}, 12.0, 7.0),
])
def test_not_given_is_resolved_by_the_run(kw, run_time, abort_speed):
    with check_of(**kw) as check:
        assert check.max_run_time == pytest.approx(run_time)
        assert check.abort_speed == pytest.approx(abort_speed)
