"""configuration/params: a Param table read from any getter, and the same table as command-line options
(add_options): names, defaults, types, choices and ranges; the sentinels keep the values users type."""
import argparse

import pytest

from morai_bridge.configuration import params
from morai_bridge.configuration.params import Param, ParamError, add_options, load

TABLE = [
    Param('rate_hz', 50.0, 'rate', minimum=1.0, maximum=200.0),
    Param('speed', 5.0, 'target speed', above=0.0, maximum=10.0),
    Param('ctrl_bytes', params.FROM_PROFILE, 'command size (default: the profile\'s)', choices=(55, 59)),
    Param('status_port', params.FROM_VERSION, 'status port (default: the version\'s)', minimum=1, maximum=65535),
    Param('mode', 'strict', 'ALIVE check', choices=('strict', 'changing', 'off')),
    Param('write', '', 'write here', metavar='FILE'),
    Param('gain', False, 'two more phases'),
]


def parser():
    p = argparse.ArgumentParser(prog='t')
    add_options(p, TABLE)
    return p


def test_load_reads_every_param_from_the_getter():
    table = [p for p in TABLE if p.takes(p.default)]        # a ~param takes its default (no sentinel outside)
    assert [p.name for p in table] == ['rate_hz', 'speed', 'mode', 'write', 'gain']
    cfg = load(table, lambda name, default: {'rate_hz': '20', 'gain': 'true'}.get(name, default))
    assert (cfg.rate_hz, cfg.gain, cfg.mode, cfg.write) == (20.0, True, 'strict', '')
    with pytest.raises(ParamError, match=r'~rate_hz=500\.0: must be at most 200\.0') as e:
        load(table, lambda name, default: 500 if name == 'rate_hz' else default)
    assert e.value.why == 'must be at most 200.0'


def test_options_have_the_params_names_defaults_and_types():
    args = parser().parse_args([])
    assert vars(args) == {'rate_hz': 50.0, 'speed': 5.0, 'ctrl_bytes': 0, 'status_port': -1, 'mode': 'strict',
                          'write': '', 'gain': False}
    args = parser().parse_args(['--rate-hz', '20', '--ctrl-bytes', '59', '--status-port', '1909', '--mode', 'off',
                                '--write', 'x.yaml', '--gain'])
    assert (args.rate_hz, args.ctrl_bytes, args.status_port, args.mode, args.write, args.gain) == \
        (20.0, 59, 1909, 'off', 'x.yaml', True)
    assert parser().parse_args(['--gain', '--no-gain']).gain is False


@pytest.mark.parametrize('argv,why', [
    (['--rate-hz', '0.5'], 'must be at least 1.0'), (['--rate-hz', 'fast'], 'expected a float (rate)'),
    (['--speed', '0'], 'must be above 0.0'), (['--speed', '30'], 'must be at most 10.0'),
    (['--ctrl-bytes', '57'], 'must be one of 55, 59'), (['--status-port', '-1'], 'must be at least 1'),
    (['--rate-hz', 'nan'], 'expected a float (rate)'),
])
def test_a_bad_value_is_a_usage_error_naming_the_option(argv, why, capsys):
    with pytest.raises(SystemExit) as e:
        parser().parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f'argument {argv[0]}: {why}, got {argv[1]!r}' in err


def test_help_shows_a_default_unless_it_is_a_sentinel_or_empty():
    text = ' '.join(parser().format_help().split())
    assert 'rate (default: 50.0)' in text and 'ALIVE check (default: strict)' in text
    assert "command size (default: the profile's)" in text and '(default: 0)' not in text
    assert "status port (default: the version's)" in text and '(default: -1)' not in text
    assert '--write FILE write here' in text and '--rate-hz FLOAT' in text and '{55,59}' in text
    assert '--gain, --no-gain' in text


def test_the_sentinels_keep_the_values_users_type():
    """launch files, docs and command lines say 0 and -1; the names only name them."""
    assert (params.DISABLED, params.FROM_VERSION, params.FROM_PROFILE) == (0, -1, 0)
    assert (params.ANY_FREE_PORT, params.EMULATOR_ANY_FREE_PORT, params.NO_IMU) == (0, -1, -1)
