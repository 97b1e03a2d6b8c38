"""docs/architecture.md stays true: every module, file, class, function and attribute it names in
backticks (``ros/sim_receive.SimReceiver._dispatch``, ``transport.UdpReceiver.poll``,
``wire/streams.py``, ``test/unit/test_layering.py``) exists in the code.  Names of other libraries
(rospy, struct, genpy, ...) are not checked."""
import importlib
import inspect
import os
import pkgutil
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, 'src', 'morai_bridge')
DOC = os.path.join(ROOT, 'docs', 'architecture.md')
#: first components that belong to other libraries or to Python
OTHERS = {'rospy', 'struct', 'object', 'genpy', 'selectors', 'diagnostic_updater', 'numpy', 'np', 'tf2_ros',
          'sensor_msgs', 'geometry_msgs', 'nav_msgs', 'morai_msgs'}
NAME = re.compile(r'^[A-Za-z_][\w]*(?:[./][A-Za-z_][\w]*)*(?:\.py)?/?$')

try:
    import morai_bridge
    MODULES = {}
    for info in pkgutil.walk_packages(morai_bridge.__path__, 'morai_bridge.'):
        if not info.name.endswith('__main__'):         # importing one would run its command line
            MODULES.setdefault(info.name.rsplit('.', 1)[-1], []).append(info.name)
except ImportError:         # pragma: no cover
    MODULES = {}


def references():
    with open(DOC) as f:
        text = f.read()
    spans = set(re.findall(r'`([^`\s]+)`', text))
    out = []
    for s in sorted(spans):
        if not NAME.match(s) or ('.' not in s and '/' not in s) or s.split('.')[0].split('/')[0] in OTHERS:
            continue
        out.append(s)
    return out


def _module(dotted):
    try:
        return importlib.import_module(dotted)
    except ImportError as e:
        if "No module named 'rospy'" in str(e) or 'morai_msgs' in str(e):
            pytest.skip('needs ROS: %s' % e)
        raise


def resolve(ref):
    """None when ``ref`` names something that exists, else why not."""
    if ref.startswith(('test/', 'config/', 'tools/', 'docs/', 'launch/')) or ref.endswith('.py') and '/' not in ref:
        path = ref if '/' in ref else None
        if path is None:                                 # a test file by its name
            hits = [r for r, _, files in os.walk(os.path.join(ROOT, 'test')) if ref in files]
            return None if hits else 'no file %s under test/' % ref
        return None if os.path.exists(os.path.join(ROOT, path)) else 'no file %s' % path
    if '/' in ref and os.path.exists(os.path.join(ROOT, ref)):      # a path from the repository's root
        return None
    if '/' in ref:
        head, _, tail = ref.rpartition('/')
        if tail.endswith('.py') or tail == '':
            p = os.path.join(SRC, ref)
            return None if os.path.exists(p) else 'no file src/morai_bridge/%s' % ref
        mod, _, rest = tail.partition('.')
        dotted = 'morai_bridge.' + (head + '/' + mod).replace('/', '.')
        if not os.path.exists(os.path.join(SRC, head, mod + '.py')) and not os.path.isdir(os.path.join(SRC, head, mod)):
            return 'no module src/morai_bridge/%s/%s.py' % (head, mod)
        return _attrs(_module(dotted), rest, ref)
    first, _, rest = ref.partition('.')
    if first in MODULES:
        if len(MODULES[first]) > 1:
            return 'module name %s is ambiguous: %s' % (first, ', '.join(MODULES[first]))
        return _attrs(_module(MODULES[first][0]), rest, ref)
    owners = [m for names in MODULES.values() for m in names if hasattr(_module(m), first)]
    if not owners:
        return '%s: no module or attribute of that name in morai_bridge' % first
    return _attrs(getattr(_module(owners[0]), first), rest, ref)


def _attrs(obj, rest, ref):
    for a in filter(None, rest.split('.')):
        if not hasattr(obj, a):
            # an instance attribute of a class: set as self.<a> in its code
            if inspect.isclass(obj) and re.search(r'\bself\.%s\s*=' % re.escape(a), inspect.getsource(obj)):
                return None
            return '%s has no %s' % (getattr(obj, '__name__', obj), a)
        obj = getattr(obj, a)
    return None


def layer_block():
    """The names of the layer block (the first fenced block): its directories and files."""
    with open(DOC) as f:
        block = f.read().split('```')[1]
    names = []
    for line in block.splitlines()[1:]:
        head = line.split('  ')[0]
        names += [w for w in head.split() if w.endswith(('/', '.py'))]
    return names


def test_the_layer_block_names_the_packages():
    names = layer_block()
    assert len(names) >= 6, names
    missing = [n for n in names if not os.path.exists(os.path.join(SRC, n))]
    assert not missing, 'docs/architecture.md\'s layer block names %s, not in src/morai_bridge/' % missing
    packages = sorted(d + '/' for d in os.listdir(SRC) if os.path.isfile(os.path.join(SRC, d, '__init__.py')))
    assert sorted(set(names)) == packages, 'the layer block should name every package once'


REFS = references()


def test_the_map_names_code():
    assert len(REFS) > 30, REFS


@pytest.mark.parametrize('ref', REFS)
def test_each_name_exists(ref):
    why = resolve(ref)
    assert why is None, 'docs/architecture.md names `%s`: %s' % (ref, why)
