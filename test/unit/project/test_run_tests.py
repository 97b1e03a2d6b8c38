"""tools/run_tests.py: the digest of failures printed after the summary (what CI's log tail shows)."""
import importlib.util
import os

import pytest

import helpers

TOOL = os.path.join(helpers.ROOT, 'tools', 'run_tests.py')


@pytest.fixture
def rt():
    spec = importlib.util.spec_from_file_location('run_tests_under_test', TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ROSTEST_OUT = """[ROSTEST]-----------------------------------------------------------------------

[morai_msgs.rosunit-test_udp_bridge/test_a][passed]
[morai_msgs.rosunit-test_udp_bridge/test_b][FAILURE]------------------------------
Traceback (most recent call last):
  File "test_udp_bridge.py", line 10, in test_b
    self.assertEqual(1, 2)
AssertionError: 1 != 2
--------------------------------------------------------------------------------

[morai_msgs.rosunit-test_udp_bridge/test_c][ERROR]--------------------------------
Traceback (most recent call last):
RuntimeError: boom
--------------------------------------------------------------------------------


SUMMARY
 * RESULT: FAIL
"""


def test_rostest_failures_and_errors_are_named_with_their_text(rt):
    assert rt.note_failures('rostest udp_bridge.test', ROSTEST_OUT)
    assert [layer for layer, _ in rt.FAILED] == ['rostest udp_bridge.test'] * 2
    first, second = (text for _, text in rt.FAILED)
    assert first.startswith('FAILURE morai_msgs.rosunit-test_udp_bridge/test_b\n')
    assert 'AssertionError: 1 != 2' in first and 'RuntimeError' not in first
    assert second.startswith('ERROR morai_msgs.rosunit-test_udp_bridge/test_c\n')
    assert 'RuntimeError: boom' in second
    assert 'test_a' not in first + second


def test_long_failure_texts_keep_their_last_lines(rt):
    body = '\n'.join('line %d' % i for i in range(100))
    out = f"[p.rosunit-t/test_x][FAILURE]-----\n{body}\n{'-' * 80}\n"
    assert rt.note_failures('rostest t.test', out)
    text = rt.FAILED[0][1]
    assert 'line 99' in text and 'line 69' not in text
    assert len(text.splitlines()) == 1 + rt.DIGEST_LINES


def test_pytest_short_summary_lines_are_kept(rt):
    out = ('....F\n=== short test summary info ===\n'
           'FAILED test/unit/test_x.py::test_y - AssertionError: assert 1 == 2\n'
           'ERROR test/unit/test_z.py - ImportError: no module\n'
           'SKIPPED [1] test/unit/test_w.py:3: no ROS\n'
           '=== 1 failed, 3 passed, 1 error in 0.5s ===\n')
    assert rt.note_failures('pytest', out)
    assert [text.split()[0] for _, text in rt.FAILED] == ['FAILED', 'ERROR']
    assert 'test_x.py::test_y' in rt.FAILED[0][1]


def test_clean_output_notes_nothing(rt):
    assert not rt.note_failures('pytest', '....\n=== 4 passed in 0.1s ===\n')
    assert rt.FAILED == []


def test_a_failed_layer_that_names_no_test_leaves_its_exit_status_and_last_lines(rt):
    out = '\n'.join('build line %d' % i for i in range(50)) + '\nFatal: no workspace\n'
    rt.digest('install', 1, 2, out)
    ((layer, text),) = rt.FAILED
    assert layer == 'install' and text.startswith('exit 2, no test named')
    assert 'Fatal: no workspace' in text and 'build line 49' in text and 'build line 10' not in text


def test_digest_of_a_layer_that_passed_adds_nothing(rt):
    rt.digest('pytest', 0, 0, 'FAILED looks like a failure but the layer passed\n')
    assert rt.FAILED == []


@pytest.mark.parametrize('env,outcome', [({}, (0, 0, 1)), ({'CI': 'true'}, (0, 1, 0)),
                                         ({'MORAI_REQUIRE_PY38': '1'}, (0, 1, 0))])
def test_no_python38_is_skipped_and_said_so_outside_ci_and_fails_in_ci(rt, monkeypatch, capsys, env, outcome):
    monkeypatch.setattr(rt, 'find_python38', lambda: (None, ['python3.8: not found']))
    for k in ('CI', 'MORAI_REQUIRE_PY38'):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert rt.py38_run([]) == outcome
    out = capsys.readouterr().out
    assert 'python3.8: not found' in out and 'bash tools/dev.sh test py38' in out
    if outcome[1]:
        assert rt.FAILED and rt.FAILED[0][0] == 'py38-pytest' and not rt.NOTES
    else:
        assert rt.NOTES[0][0] == 'py38-pytest' and 'SKIPPED the unit tests on Python 3.8' in rt.NOTES[0][1]
        assert not rt.FAILED


@pytest.mark.parametrize('argv, quick, rest', [
    ([], False, []),
    (['--quick'], True, []),
    (['unit', '--quick'], True, ['unit']),
    (['--quick', 'udp_bridge.test', 'closed_loop'], True, ['udp_bridge.test', 'closed_loop']),
    (['-x', 'unit'], False, ['-x', 'unit']),
    (['--quick', '-x', '--lf'], True, ['-x', '--lf']),
    (['unit', '-k', 'fuzz', 'test/unit/x.py::test_y'], False, ['unit', '-k', 'fuzz', 'test/unit/x.py::test_y']),
    (['--maxfail=2', 'lint', '--quick', 'py38', '-v'], True, ['--maxfail=2', 'lint', 'py38', '-v']),
])
def test_the_command_line_keeps_every_argument_in_its_order(rt, argv, quick, rest):
    """`bash tools/dev.sh test [--quick] [layers] [x.test] [pytest arguments]`: --quick anywhere, the other
    arguments in their order, pytest's options (which the parser does not know) among them."""
    assert rt.arguments(argv) == (quick, rest)


def test_the_arguments_go_to_the_layers_as_before(rt, monkeypatch):
    monkeypatch.setenv('MORAI_SCREENSHOT', 'unused.png')      # main() sets a default otherwise
    calls = []
    monkeypatch.setattr(rt, 'lint', lambda: calls.append(('lint',)) or (1, 0, 0))
    monkeypatch.setattr(rt, 'unit', lambda extra, *a: calls.append(('unit', extra) + a) or (1, 0, 0))
    monkeypatch.setattr(rt, 'ros', lambda names: calls.append(('ros', names)) or (1, 0, 0))
    assert rt.main(['--quick', '-x']) == 0
    assert calls == [('lint',), ('unit', ['-x']), ('ros', list(rt.QUICK_ROSTESTS))]
    del calls[:]
    assert rt.main(['udp_bridge.test', 'closed_loop.test']) == 0
    assert calls == [('ros', ['udp_bridge.test', 'closed_loop.test'])]
    del calls[:]
    assert rt.main(['unit', 'test/unit/wire::test_x', '-q']) == 0
    assert calls == [('unit', ['test/unit/wire::test_x', '-q'])]
