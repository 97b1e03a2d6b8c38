"""Fixtures shared by the unit tests, and the layout: test/unit/<package>/test_<module>.py mirrors
src/morai_bridge/<package>/<module>.py (docs/architecture.md, "Tests"; project/ holds the checks of
the repository as a whole).  Every folder is a package (an __init__.py), so that two folders may hold
files of the same name (link/test_workers.py and a future ros/test_workers.py, say): pytest imports
them as unit.link.test_workers and unit.ros.test_workers.  The helper modules beside
this file (helpers.py, capture_frames.py, ...) are imported by their plain names: this folder is put
on sys.path here, for every test below it."""
import os
import signal
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# A shell starts background jobs (`cmd &` in a script, nohup) with SIGINT ignored, and Python then keeps
# it ignored: the tests that interrupt a run, or stop a child with SIGINT as a user's Ctrl-C would, need
# the ordinary disposition (children get it too: exec resets a handled signal to its default).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# ---------------------------------------------------------------- py38 layer: tests without ROS
# tools/run_tests.py's py38 layer sets MORAI_UNIT_NO_ROS=1 and runs these tests in a Python 3.8
# virtual environment that has no ROS.  Which tests need ROS is read from the code (ros_imports.py):
# files whose module-level imports reach ROS are not collected, and a test that stops on a
# missing ROS module is reported as skipped.  Without the variable nothing changes: a missing ROS
# module is an error, as it should be where ROS is installed.
NO_ROS = os.environ.get('MORAI_UNIT_NO_ROS') == '1'
collect_ignore = []
if NO_ROS:
    import glob

    import ros_imports
    _NEEDS_ROS = {}
    for _path in sorted(glob.glob(os.path.join(HERE, '**', 'test_*.py'), recursive=True)):
        _chain = ros_imports.ros_import_chain(_path)
        if _chain:
            _NEEDS_ROS[os.path.relpath(_path, HERE)] = ' -> '.join(_chain)
            collect_ignore.append(os.path.relpath(_path, HERE))

    def pytest_report_header(config):
        lines = [f'no-ROS mode (MORAI_UNIT_NO_ROS=1): {len(_NEEDS_ROS)} test files need ROS at import, not collected:']
        lines += ['  %s (%s)' % item for item in sorted(_NEEDS_ROS.items())]
        return lines

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        exc = call.excinfo
        if exc is not None and call.when in ('setup', 'call') and isinstance(exc.value, ImportError) \
                and ros_imports.is_ros_module(getattr(exc.value, 'name', None)):
            report.outcome = 'skipped'
            report.longrepr = (str(item.fspath), item.location[1] + 1,
                               f'Skipped: needs ROS (no module named {exc.value.name!r})')
