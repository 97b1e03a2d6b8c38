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


# ------------------------------------------------------------------ a whole command line (command_line, parse_args)

def _even(value):
    if value % 2:
        raise ValueError('must be even')
    return value


PROGRAM = [
    Param('source', None, 'file to read', positional=True, nargs='?', metavar='FILE'),
    Param('count', None, 'stop after N', kind=int, minimum=1, metavar='N'),
    Param('pairs', 2, 'an even number', check=_even),
    Param('set', [], 'NAME=VALUE, again for more', repeat=True, metavar='NAME=VALUE'),
    Param('verbose', False, 'more', flags=('-v', '--verbose')),
    Param('quiet', False, 'less', flags=('-q', '--quiet')),
    Param('quick', False, 'short runs', switch=True),
    Param('secret', 0, 'not in the help', hidden=True),
    Param('key', None, 'needed', required=True),
]


def test_command_line_declares_positionals_repeats_switches_and_checks():
    args = params.parse_args(PROGRAM, ['--key', 'k'], prog='t')
    assert vars(args) == {'source': None, 'count': None, 'pairs': 2, 'set': [], 'verbose': False, 'quiet': False,
                          'quick': False, 'secret': 0, 'key': 'k'}
    args = params.parse_args(PROGRAM, ['x.pcap', '--count', '3', '--pairs', '4', '--set', 'a=1', '--set', 'b=2',
                                       '-v', '--quick', '--secret', '7', '--key', 'k'], prog='t')
    assert (args.source, args.count, args.pairs, args.set, args.verbose, args.quick, args.secret) == \
        ('x.pcap', 3, 4, ['a=1', 'b=2'], True, True, 7)
    text = ' '.join(params.command_line(PROGRAM, prog='t').format_help().split())
    assert '--quick short runs' in text and '--no-quick' not in text and '-v, --verbose more' in text
    assert 'secret' not in text and '[FILE]' in text and '--set NAME=VALUE' in text
    assert 'an even number (default: 2)' in text and 'stop after N (default' not in text


@pytest.mark.parametrize('argv,why', [
    (['--count', '0'], 'argument --count: must be at least 1, got \'0\''),
    (['--pairs', '3'], 'argument --pairs: must be even, got \'3\''),
    (['--pairs', 'x'], 'argument --pairs: expected a int'),
    (['-v', '-q'], 'argument -q/--quiet: not allowed with argument -v/--verbose'),
    ([], 'the following arguments are required: --key'),
])
def test_command_line_usage_errors_name_the_option(argv, why, capsys):
    with pytest.raises(SystemExit) as e:
        params.parse_args(PROGRAM, argv + (['--key', 'k'] if argv else []), prog='t',
                          exclusive=[('verbose', 'quiet')])
    assert e.value.code == 2
    assert why in capsys.readouterr().err


def test_command_line_subcommands_and_the_rest_of_the_line():
    sub = {'files': ([Param('set', '', 'the set', positional=True)], 'list the files'),
           'run': ([Param('cmd', [], 'the command', positional=True, nargs=params.REST)], 'run it')}
    args = params.parse_args([Param('dry', False, 'no change', switch=True)], ['--dry', 'files', 'v1'],
                             subcommands=sub, prog='t')
    assert (args.command, args.set, args.dry) == ('files', 'v1', True)
    args = params.parse_args([], ['run', 'ls', '-l', '--all'], subcommands=sub, prog='t')
    assert (args.command, args.cmd) == ('run', ['ls', '-l', '--all'])
    with pytest.raises(SystemExit):
        params.parse_args([], [], subcommands=sub, prog='t')
    with pytest.raises(ValueError, match='exclusive names no Param nope'):
        params.command_line([], exclusive=[('nope',)])


def test_an_unset_word_means_empty():
    p = Param('settings', '', 'settings file', unset='none')
    assert p.coerce('none') == '' and p.coerce('') == '' and p.coerce('a.json') == 'a.json'
    assert p.shown_default == 'none' and Param('x', '', 'x').shown_default == ''
    assert Param('on', True, 'x').shown_default == 'true' and Param('n', 2.5, 'x').shown_default == '2.5'
    with pytest.raises(ValueError):
        Param('rate', 1.0, 'x', unset='none')
