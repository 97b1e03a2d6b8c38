"""The codec layer must stay usable without ROS."""
import os
import pkgutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, 'src')
ROS_MODULES = ('rospy', 'genpy', 'roslib', 'rosgraph', 'std_msgs', 'geometry_msgs', 'morai_msgs')


def _modules(pkg):
    base = os.path.join(SRC, *pkg.split('.'))
    return [pkg] + [pkg + '.' + m.name for m in pkgutil.iter_modules([base])]


def test_wire_and_emulators_import_without_ros():
    mods = _modules('morai_bridge.wire') + _modules('morai_bridge.emu')
    code = (
        'import importlib, sys\n'
        'for m in %r: importlib.import_module(m)\n'
        'bad = sorted(k for k in sys.modules if k.split(".")[0] in %r)\n'
        'print(",".join(bad))\n' % (mods, ROS_MODULES))
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, '-c', code], env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == '', 'ROS modules pulled in by the wire/emu layers: ' + out
