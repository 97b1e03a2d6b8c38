"""The maps stay true.  docs/architecture.md: every module, file, class, function and attribute it
names in backticks (``ros/udp_bridge/sim_receive.SimReceiver._dispatch``, ``transport.UdpReceiver.poll``,
``wire/udp/streams.py``, ``test/unit/project/test_layering.py``) exists in the code, and its layer block names
the packages.  README's Layout block: every package, every module of ros/, link/ and wire/ and of their rooms
(sub-packages), and no ros/ module or room that does not exist.  Names of other libraries (rospy, struct,
genpy, ...) are not checked."""
import importlib
import inspect
import os
import pkgutil
import re

import pytest

import helpers

ROOT = helpers.ROOT
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
            pytest.skip(f'needs ROS: {e}')
        raise


def resolve(ref):
    """None when ``ref`` names something that exists, else why not."""
    if ref.startswith(('test/', 'config/', 'tools/', 'docs/', 'launch/')) or ref.endswith('.py') and '/' not in ref:
        path = ref if '/' in ref else None
        if path is None:                                 # a test file by its name
            hits = [r for r, _, files in os.walk(os.path.join(ROOT, 'test')) if ref in files]
            return None if hits else f'no file {ref} under test/'
        return None if os.path.exists(os.path.join(ROOT, path)) else f'no file {path}'
    if '/' in ref and os.path.exists(os.path.join(ROOT, ref)):      # a path from the repository's root
        return None
    if '/' in ref:
        head, _, tail = ref.rpartition('/')
        if tail.endswith('.py') or tail == '':
            p = os.path.join(SRC, ref)
            return None if os.path.exists(p) else f'no file src/morai_bridge/{ref}'
        mod, _, rest = tail.partition('.')
        dotted = 'morai_bridge.' + (head + '/' + mod).replace('/', '.')
        if not os.path.exists(os.path.join(SRC, head, mod + '.py')) and not os.path.isdir(os.path.join(SRC, head, mod)):
            return f'no module src/morai_bridge/{head}/{mod}.py'
        return _attrs(_module(dotted), rest, ref)
    first, _, rest = ref.partition('.')
    if first in MODULES:
        if len(MODULES[first]) > 1:
            return f"module name {first} is ambiguous: {', '.join(MODULES[first])}"
        return _attrs(_module(MODULES[first][0]), rest, ref)
    owners = [m for names in MODULES.values() for m in names if hasattr(_module(m), first)]
    if not owners:
        return f'{first}: no module or attribute of that name in morai_bridge'
    return _attrs(getattr(_module(owners[0]), first), rest, ref)


def _attrs(obj, rest, ref):
    for a in filter(None, rest.split('.')):
        if not hasattr(obj, a):
            # an instance attribute of a class: set as self.<a> in its code
            if inspect.isclass(obj) and re.search(rf'\bself\.{re.escape(a)}\s*=', inspect.getsource(obj)):
                return None
            return f"{getattr(obj, '__name__', obj)} has no {a}"
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
    assert not missing, f'docs/architecture.md\'s layer block names {missing}, not in src/morai_bridge/'
    packages = sorted(d + '/' for d in os.listdir(SRC) if os.path.isfile(os.path.join(SRC, d, '__init__.py')))
    assert sorted(set(names)) == packages, 'the layer block should name every package once'


REFS = references()


def test_the_map_names_code():
    assert len(REFS) > 30, REFS


@pytest.mark.parametrize('ref', REFS)
def test_each_name_exists(ref):
    why = resolve(ref)
    assert why is None, f'docs/architecture.md names `{ref}`: {why}'


# --- README's Layout block: the packages and the modules it names ---------------------------------

def layout_sections():
    """{package: text of its lines} of README.md's Layout block (src/morai_bridge/ part)."""
    with open(os.path.join(ROOT, 'README.md')) as f:
        text = f.read()
    block = text.split('## Layout', 1)[1].split('```')[1]
    sections, current = {}, None
    for line in block.splitlines():
        m = re.match(r'^  ([a-z_]+)/\s', line)
        if m:
            current = m.group(1)
            sections[current] = line[len(m.group(0)):]
        elif current and (line.startswith('    ') or re.match(r'^ {20,}', line)):
            sections[current] += '\n' + line
        elif not line.startswith('  ') or re.match(r'^[a-z]', line):
            current = None
    return sections


def modules_of(package):
    d = os.path.join(SRC, package)
    return sorted(f[:-3] for f in os.listdir(d) if f.endswith('.py') and f != '__init__.py' and f != '__main__.py')


def rooms_of(package):
    """The sub-packages of a package, as 'name/'."""
    d = os.path.join(SRC, package)
    return sorted(f + '/' for f in os.listdir(d) if os.path.isfile(os.path.join(d, f, '__init__.py')))


def test_the_readme_layout_names_every_package():
    sections = layout_sections()
    packages = sorted(d for d in os.listdir(SRC) if os.path.isfile(os.path.join(SRC, d, '__init__.py')))
    assert sorted(sections) == packages, f'README Layout names {sorted(sections)}; src/morai_bridge has {packages}'


ROOMS = ['ros/' + r for r in rooms_of('ros')] + ['wire/' + r for r in rooms_of('wire')]


def test_the_rooms_are_there():
    assert {'ros/udp_bridge/', 'ros/sensors/', 'wire/udp/', 'wire/erp42/'} <= set(ROOMS), ROOMS


@pytest.mark.parametrize('package', ['ros', 'link', 'wire'] + [r.rstrip('/') for r in ROOMS])
def test_the_readme_layout_names_the_modules_of(package):
    """Every module of these packages (and of the rooms of ros/ and wire/) is named in its README Layout
    lines (a room's, in its package's), and the ros/ lines' first column names only modules and rooms
    that exist."""
    text = layout_sections()[package.split('/')[0]]
    words = set(re.findall(r'[a-z_0-9]+', text))
    named = [m for m in modules_of(package) if m in words or m.replace('_', ' ') in text]
    missing = sorted(set(modules_of(package)) - set(named))
    assert not missing, f"README Layout does not name {package}/{', '.join(missing)}"
    if package == 'ros':
        for room in rooms_of('ros'):
            assert re.search(r'(?m)^    %s ' % re.escape(room), text), f'README Layout has no line of ros/{room}'
        for line in text.splitlines()[1:]:
            if not re.match(r'^    [a-z]', line):     # a description's continuation, not a module line
                continue
            column = line.strip().split('  ')[0]
            for name in column.split():
                assert name in modules_of('ros') + rooms_of('ros'), \
                    f'README Layout names ros/{name}, which does not exist'


def test_docstrings_cite_only_files_in_the_repository():
    """The protocol facts' shared spec files are not in the repository: code cites the docs that carry
    them (docs/sensors.md, docs/erp42.md, docs/versions.md, ...)."""
    cited = []
    for dirpath, _, files in os.walk(SRC):
        for f in files:
            if f.endswith('.py'):
                with open(os.path.join(dirpath, f)) as fh:
                    for k, line in enumerate(fh, 1):
                        if re.search(r'shared/spec|\bspec/(udp|erp42|sensors)\.md', line):
                            cited.append('%s:%d' % (os.path.relpath(os.path.join(dirpath, f), ROOT), k))
    assert not cited, f"cites a file outside the repository: {', '.join(cited)}"
