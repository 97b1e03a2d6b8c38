#!/usr/bin/python3
"""The morai_msgs message sets (msg_sets/, docs/versions.md "Message sets"): resolve, check, import.

    tools/msg_sets.py files SET            the .msg / .srv files SET builds (what CMakeLists.txt picks)
    tools/msg_sets.py md5 SET              md5 of every type SET generates, from our files (genmsg)
    tools/msg_sets.py check [SET ...]      our files' md5 against test/data/msg_sets/SET.json
    tools/msg_sets.py import SET UPSTREAM --commit C [--repo R]
                                           a new set from an upstream morai_msgs tree: its md5 table
                                           (test/data/msg_sets/SET.json) and the layer msg_sets/SET/
                                           (the types new or changed since the set before)
    tools/msg_sets.py which [BAG ...] [--master]
                                           which set a bag, the running ROS master's publishers or (no
                                           argument) the sourced workspace use, by md5, and what to build
    tools/msg_sets.py rules                msg_sets/migration_rules.bmr: rosbag migration rules between
                                           consecutive sets, both ways
    tools/msg_sets.py fields SET TREE=REPO@COMMIT ...
                                           upstream's field lists of the set's types, for the tests'
                                           client package (test/data/msg_sets/SET.fields.json)
    tools/msg_sets.py add SET UPSTREAM --commit C --ref BRANCH [--repo R]
                                           an upstream tree that is SET plus new types (a branch):
                                           its new types carried by SET and the sets after it, when
                                           they change no md5 of those sets; the types it changed
                                           recorded in SET's table as not carried (`which` names them)

A set is a layer over the sets before it, in the order of SETS: msg_sets/<set>/msg and /srv hold the
definitions that set adds or changes, msg_sets/<set>/dropped.txt the types it no longer has.  The
files the import writes hold upstream's field lists (facts) without its comments; comments in our
files are ours.  A set may carry types beyond its upstream commit: those an upstream branch adds
(`add`; listed under "additive" in the tables), only when they change no md5 of the set.  md5 sums
come from genmsg, as catkin computes them.  No ROS master is needed.
"""
import functools
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

SETS_DIR = os.path.join(ROOT, 'msg_sets')
TABLES = os.path.join(ROOT, 'test', 'data', 'msg_sets')


def _cmake_sets():
    """(every set oldest first, the default set), as CMakeLists.txt declares them."""
    with open(os.path.join(ROOT, 'CMakeLists.txt')) as f:
        text = f.read()
    sets = tuple(re.search(r'^set\(MORAI_MSGS_SETS ([^)]*)\)', text, re.M).group(1).split())
    default = re.search(r'^set\(MORAI_MSGS_SET_DEFAULT (\w+)\)', text, re.M).group(1)
    return sets, default


#: every set, oldest first (each layers over the ones before it), and the one built by default
SETS, DEFAULT = _cmake_sets()
KINDS = (('msg', '.msg'), ('srv', '.srv'))


def layer_files(layer):
    """{type name: path} of one layer's own definitions."""
    out = {}
    for kind, ext in KINDS:
        d = os.path.join(SETS_DIR, layer, kind)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else ():
            if name.endswith(ext):
                out[name[:-len(ext)]] = os.path.join(d, name)
    return out


def dropped(layer):
    path = os.path.join(SETS_DIR, layer, 'dropped.txt')
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {line.split('#')[0].strip() for line in f} - {''}


def resolve(set_name):
    """{type name: path}: the definitions the set builds (CMakeLists.txt applies the same rule)."""
    if set_name not in SETS:
        raise SystemExit(f"unknown message set {set_name!r} (known: {', '.join(SETS)})")
    files = {}
    for layer in SETS[:SETS.index(set_name) + 1]:
        for name in dropped(layer):
            files.pop(name, None)
        files.update(layer_files(layer))
    return files


def load_specs(files):
    """{type name: (genmsg spec, md5, full text)} of {type name: path} as catkin sees them: linked into
    one directory per kind first (with several, genmsg could take a dependency from the wrong one).
    A service's md5 is (md5, request md5, response md5) and it has no full text."""
    import genmsg
    import genmsg.msg_loader as loader
    from genmsg import gentools
    import rospkg
    rospack = rospkg.RosPack()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, _ in KINDS:
            os.makedirs(os.path.join(tmp, kind))
        for name, path in files.items():
            os.symlink(os.path.abspath(path), os.path.join(tmp, path[-3:], name + path[-4:]))
        search = {'morai_msgs': [os.path.join(tmp, 'msg')]}
        for pkg in ('std_msgs', 'geometry_msgs'):
            search[pkg] = [os.path.join(rospack.get_path(pkg), 'msg')]
        ctx = genmsg.MsgContext.create_default()
        for name in sorted(files):
            full = 'morai_msgs/' + name
            if files[name].endswith('.msg'):
                spec = loader.load_msg_by_type(ctx, full, search)
                loader.load_depends(ctx, spec, search)
                out[name] = (spec, gentools.compute_md5(ctx, spec), gentools.compute_full_text(ctx, spec))
            else:
                spec = loader.load_srv_from_file(ctx, os.path.join(tmp, 'srv', name + '.srv'), full)
                loader.load_depends(ctx, spec.request, search)
                loader.load_depends(ctx, spec.response, search)
                out[name] = (spec, (gentools.compute_md5(ctx, spec), gentools.compute_md5(ctx, spec.request),
                                    gentools.compute_md5(ctx, spec.response)), None)
    return out


def md5_of_files(files, parts=False):
    """{'morai_msgs/Name': md5} of {type name: path} (:func:`load_specs`); ``parts``: a service's
    value is (md5, request md5, response md5)."""
    return {'morai_msgs/' + name: md5 if parts or not isinstance(md5, tuple) else md5[0]
                for name, (_, md5, _) in load_specs(files).items()}


@functools.lru_cache(maxsize=None)
def md5_of_set(set_name, parts=False):
    """md5 of every type of the set, from our files (computed once per set)."""
    return md5_of_files(resolve(set_name), parts)


def table(set_name):
    with open(os.path.join(TABLES, set_name + '.json')) as f:
        return json.load(f)


def check(sets):
    bad = 0
    for s in sets:
        want = {k: v['md5'] for k, v in table(s)['types'].items()}
        got = md5_of_set(s)
        for name in sorted(set(want) | set(got)):
            if want.get(name) != got.get(name):
                bad += 1
                print(f'{s} {name}: ours {got.get(name)}, upstream {want.get(name)}')
        print('%s: %d types, %s' % (s, len(got), 'all md5-identical' if not bad else '%d differ' % bad))
    return bad


def upstream_types(root):
    """{type name: path} of what an upstream tree generates: the files its CMakeLists.txt lists."""
    with open(os.path.join(root, 'CMakeLists.txt')) as f:
        cmake = re.sub(r'#.*', '', f.read())
    out = {}
    for (kind, ext), call in zip(KINDS, ('add_message_files', 'add_service_files')):
        block = re.search(call + r'\s*\((.*?)\)', cmake, re.S).group(1)
        for token in block.split():
            if token.endswith(ext):
                out[token[:-len(ext)]] = os.path.join(root, kind, token)
    return out


def field_text(path, header):
    """Our text of a definition: upstream's fields and constants, one per line, no comments."""
    lines = [header]
    with open(path) as f:
        for line in f:
            line = line.split('#')[0].strip()   # no string constants in morai_msgs
            if line:
                lines.append(' '.join(line.split()))
    return '\n'.join(lines) + '\n'


def _fields(path):
    """A definition's field lines, comments and spacing aside (Header is std_msgs/Header)."""
    return [('std_msgs/' + line) if line.startswith('Header ') else line
            for line in field_text(path, '').splitlines() if line]


def _entries(found):
    """Table entries of {type: md5} (a service's md5 as (md5, request md5, response md5))."""
    entries = {}
    for k, v in sorted(found.items()):
        if isinstance(v, tuple):
            entries[k] = {'kind': 'srv', 'md5': v[0], 'request_md5': v[1], 'response_md5': v[2]}
        else:
            entries[k] = {'kind': 'msg', 'md5': v}
    return entries


def _write_json(name, doc):
    """test/data/msg_sets/<name>.json, as every writer here lays it out."""
    os.makedirs(TABLES, exist_ok=True)
    with open(os.path.join(TABLES, name + '.json'), 'w') as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write('\n')


def _write_table(set_name, doc):
    doc['about'] = ('md5 of every type upstream generates at that commit (genmsg over the files its '
                    'CMakeLists.txt lists); tools/msg_sets.py import wrote it') + (
        '; plus the types "additive" names, from the ref named there, and tools/msg_sets.py add added them'
        if doc.get('additive') else '')
    _write_json(set_name, doc)


def additive(set_name):
    """The types the set carries beyond its upstream commit (`add`: another upstream ref's new
    types), 'morai_msgs/Name' each."""
    return {t for a in table(set_name).get('additive', ()) for t in a['types']}


def import_set(set_name, upstream, commit, repo):
    types = upstream_types(upstream)
    found = md5_of_files(types, parts=True)
    md5 = {k: v[0] if isinstance(v, tuple) else v for k, v in found.items()}
    entries = _entries(found)
    path = os.path.join(TABLES, set_name + '.json')
    doc = table(set_name) if os.path.exists(path) else {}     # keeps the notes written by hand
    before = SETS[SETS.index(set_name) - 1]
    # the types `add` made the sets before carry stay carried, unless upstream now has them itself
    records = {}
    for a in table(before).get('additive', []) + doc.get('additive', []):
        kept = [t for t in a['types'] if t.split('/')[1] not in types]
        records.setdefault(a['ref'], dict(a, types=[]))['types'].extend(kept)
    carried = {t for a in records.values() for t in a['types']}
    known = dict(table(before)['types'], **doc.get('types', {}))
    entries.update({t: known[t] for t in carried})
    doc['additive'] = [dict(a, types=sorted(set(a['types']))) for _, a in sorted(records.items()) if a['types']]
    if not doc['additive']:
        del doc['additive']
    doc.update({'set': set_name, 'repository': repo, 'commit': commit, 'types': entries})
    _write_table(set_name, doc)
    old = md5_of_set(before)
    layer = os.path.join(SETS_DIR, set_name)
    written = 0
    for name, path in sorted(types.items()):
        if old.get('morai_msgs/' + name) == md5['morai_msgs/' + name]:
            continue
        kind = path[-3:]
        ours = os.path.join(layer, kind, name + '.' + kind)
        if os.path.exists(ours) and _fields(ours) == _fields(path):
            continue        # the same fields: our file (and its comments) stays
        os.makedirs(os.path.join(layer, kind), exist_ok=True)
        header = f'# morai_msgs/{name}, set {set_name}: the field list of {repo} at {commit}'
        with open(ours, 'w') as f:
            f.write(field_text(path, header))
        written += 1
    gone = sorted(k.split('/')[1] for k in old if k.split('/')[1] not in types and k not in carried)
    with open(os.path.join(layer, 'dropped.txt'), 'w') as f:
        f.write(f'# types of set {before} that set {set_name} no longer has\n')
        f.writelines(name + '\n' for name in gone)
    print('%s: %d types, %d written to msg_sets/%s, %d dropped' % (set_name, len(types), written,
                                                                     set_name, len(gone)))
    return check([set_name])


def add_types(set_name, upstream, commit, ref, repo):
    """`add`: an upstream tree that is the set's upstream commit plus types of its own (``ref``, a
    branch, at ``commit``).  Its types that the set's upstream commit does not have are carried by
    the set and every set after it: our file in msg_sets/<set>/, upstream's md5 in each table and
    field list in each fields.json.  Refused (nothing written) unless every one of them keeps
    upstream's md5 in each of those sets and no other md5 there changes, i.e. when they are purely
    additive.  The types both have whose md5 differs are the ref's own layouts no set builds: the
    set's table lists them under ``not_carried`` (field lists and md5), where `which` finds them."""
    where = f'{repo}@{commit}'
    ups = upstream_types(upstream)
    there = md5_of_files(ups, parts=True)
    carried_sets = SETS[SETS.index(set_name):]
    base = {t for t in table(set_name)['types'] if t not in additive(set_name)}   # the upstream commit's
    new = sorted(t for t in there if t not in base)
    ours = resolve(set_name)
    clash = [f'set {s} has its own {t}' for s in carried_sets[1:] for t in new
             if (t in table(s)['types'] and t not in additive(s)) or t.split('/')[1] in layer_files(s)]
    if clash:
        raise SystemExit('%s %s: %s' % (ref, commit, '; '.join(clash)))
    written = []
    for t in new:
        name = t.split('/')[1]
        if name in ours:
            continue                    # carried already (`add` run before): our file stays
        kind = ups[name][-3:]
        path = os.path.join(SETS_DIR, set_name, kind, name + '.' + kind)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(field_text(ups[name], f'# morai_msgs/{name}, carried from set {set_name} on: the field list '
                                          f'of {repo} {ref} at {commit}'))
        written.append(path)
    md5_of_set.cache_clear()
    mine = md5_of_set(set_name, parts=True)
    changed = sorted(t for t in there if t in base and there[t] != mine[t])
    bad = []
    for s in carried_sets:
        got = md5_of_set(s, parts=True)
        was = {k: (v['md5'], v['request_md5'], v['response_md5']) if v['kind'] == 'srv' else v['md5']
               for k, v in table(s)['types'].items()}
        bad += [f'set {s} {k}: {got.get(k)} instead of {v}' for k, v in sorted(was.items()) if got.get(k) != v]
        bad += [f'set {s} {k}: {got.get(k)}, at {ref} {there[k]}' for k in new if got.get(k) != there[k]]
    if bad:
        for path in written:
            os.remove(path)
        raise SystemExit('%s %s is not additive to set %s: %s' % (ref, commit, set_name, '; '.join(bad)))
    for s in carried_sets:
        doc = table(s)
        doc['types'].update(_entries({k: there[k] for k in new}))
        records = [a for a in doc.get('additive', []) if a['ref'] != ref]
        doc['additive'] = sorted(records + [{'ref': ref, 'repository': repo, 'commit': commit, 'types': new}],
                                 key=lambda a: a['ref']) if new else records
        if not doc['additive']:
            del doc['additive']
        if s == set_name:
            variants = [v for v in doc.get('not_carried', []) if v['ref'] != ref]
            if changed:
                kinds = {t: ups[t.split('/')[1]] for t in changed}
                variants.append({'ref': ref, 'repository': repo, 'commit': commit, 'types': {
                    t: dict(_entries({t: there[t]})[t], text=field_text(kinds[t], '').lstrip('\n'))
                    for t in changed}})
            doc['not_carried'] = sorted(variants, key=lambda v: v['ref'])
            if not doc['not_carried']:
                del doc['not_carried']
        _write_table(s, doc)
        fields_path = os.path.join(TABLES, s + '.fields.json')
        if os.path.exists(fields_path):
            with open(fields_path) as f:
                fields = json.load(f)
            for t in new:
                name = t.split('/')[1]
                fields['types'][name] = {'kind': ups[name][-3:], 'from': where,
                                         'text': field_text(ups[name], '').lstrip('\n')}
            _write_json(s + '.fields', fields)
    print('%s %s: %d types carried by the sets %s (%d files written); %d changed, not carried: %s' % (
        ref, commit, len(new), ', '.join(carried_sets), len(written), len(changed), ', '.join(changed) or '-'))
    return check(carried_sets)


def write_field_lists(set_name, sources):
    """test/data/msg_sets/<set>.fields.json: upstream's field lists of every type of the set, for
    the tests' client package (built from them alone, in a workspace of its own).  ``sources``:
    [(upstream tree, 'repository@commit')], searched in order for each type's file; the lists'
    md5 must be the set's table's."""
    want = table(set_name)['types']
    out, paths = {}, {}
    for full, v in sorted(want.items()):
        name = full.split('/')[1]
        for root, where in sources:
            path = os.path.join(root, v['kind'], name + '.' + v['kind'])
            if os.path.exists(path):
                out[name] = {'kind': v['kind'], 'from': where,
                             'text': field_text(path, '').lstrip('\n')}
                paths[name] = path
                break
        else:
            raise SystemExit(f'{set_name}: no source has {full}')
    got = md5_of_files(paths)
    bad = sorted(k for k in want if got.get(k) != want[k]['md5'])
    if bad:
        raise SystemExit(f"{set_name}: field lists whose md5 is not the table's: {', '.join(bad)}")
    _write_json(set_name + '.fields', {
        'set': set_name, 'types': out, 'about': 'upstream\'s field lists of every type of the set (facts, no '
        'comments), the source of the tests\' client package; tools/msg_sets.py fields wrote it'})
    print(f'{set_name}: {len(out)} field lists, md5 as the table')


# fields that changed name between sets and mean the same (older name -> newer name)
RENAMED = {'EgoVehicleStatus': {'wheel_angle': 'front_steer_angle'}, 'CtrlCmd': {'steering': 'front_steer'}}
RULES = os.path.join(SETS_DIR, 'migration_rules.bmr')


def bare(full_text):
    """A full text without comments or blank lines (only fields, constants and the MSG: sections
    count for rosbag and the md5; the comments are other projects' prose)."""
    out = []
    for line in full_text.splitlines():
        if line.startswith('====') or line.startswith('MSG: '):
            out.append(line)
        elif line.split('#')[0].strip():
            out.append(' '.join(line.split('#')[0].split()))
    return '\n'.join(out)


def _update_lines(name, old, new):
    """The body of a rule's update(): every field of the new definition that the old one has
    (by name, or by RENAMED in either direction) is copied or migrated; the others keep genpy's
    default (0, '', [], False)."""
    import genmsg.msgs
    renamed = RENAMED.get(name, {})
    source = {f: f for f in old.names}
    for a, b in renamed.items():
        if a in old.names:
            source[b] = a
        if b in old.names:
            source[a] = b
    lines, migrated = [], set()
    for field, ftype in zip(new.names, new.types):
        src = source.get(field)
        if src is None:
            lines.append(f'# {field}: not in the old definition, left at its default')
            continue
        base, is_array, _ = genmsg.msgs.parse_type(ftype)
        if genmsg.msgs.is_builtin(base):
            lines.append(f'new_msg.{field} = old_msg.{src}')
            continue
        short = migration_name(base)
        migrated.add(short)
        if is_array:
            lines.append(f'self.migrate_array(old_msg.{src}, new_msg.{field}, "{short}")')
        else:
            lines.append(f'self.migrate(old_msg.{src}, new_msg.{field})')
    used = {source.get(f) for f in new.names}
    lines += [f'# {f}: not in the new definition, dropped' for f in old.names if f not in used]
    return lines, sorted(migrated)


def migration_name(ftype):
    """A message type as rosbag's migrated_types names it (its clean_name)."""
    if ftype in ('Header', 'std_msgs/Header'):
        return 'Header'
    return ftype[len('morai_msgs/'):] if ftype.startswith('morai_msgs/') else ftype


def migration_rules():
    """The text of msg_sets/migration_rules.bmr: for every message type whose md5 differs between
    consecutive sets, a rule each way (2022 -> 2024 -> 2026, then back), in one chain per type."""
    specs = {s: {n: v for n, v in load_specs(resolve(s)).items() if v[2] is not None} for s in SETS}
    steps = [(a, b) for a, b in zip(SETS, SETS[1:])]
    steps += [(b, a) for a, b in reversed(steps)]
    out = ['# rosbag migration rules between the morai_msgs message sets (docs/versions.md).',
           '# Generated by tools/msg_sets.py rules; test/unit/project/test_interface.py checks it is current.',
           '# package.xml exports it, so `rosbag check` / `rosbag fix` in a workspace of one set',
           '# migrate bags recorded under another.  Fields a set does not have are dropped going there',
           '# (e.g. rear_steer_angle going to 2024) and left at 0 / [] going the other way.', '']
    for order, (a, b) in enumerate(steps):
        for name in sorted(set(specs[a]) & set(specs[b])):
            (old, old_md5, old_text), (new, new_md5, new_text) = specs[a][name], specs[b][name]
            if old_md5 == new_md5:
                continue
            body, migrated = _update_lines(name, old, new)
            out += [f'class update_morai_msgs_{name}_{a}_to_{b}(MessageUpdateRule):',
                    f'    old_type = "morai_msgs/{name}"',
                    f'    old_full_text = """\n{bare(old_text)}\n"""',
                    f'    new_type = "morai_msgs/{name}"',
                    f'    new_full_text = """\n{bare(new_text)}\n"""',
                    '    order = %d' % order,
                    '    migrated_types = [%s]' % ', '.join('("%s", "%s")' % (t, t) for t in migrated),
                    '    valid = True',
                    '',
                    '    def update(self, old_msg, new_msg):']
            out += ['        ' + line for line in body] + ['', '']
    return '\n'.join(out).rstrip() + '\n'


def md5s_of_bag(path):
    """{type: md5} of the morai_msgs types a bag holds."""
    import rosbag
    with rosbag.Bag(path) as bag:
        return {t: md5 for t, md5 in bag.get_type_and_topic_info().msg_types.items()
                    if t.startswith('morai_msgs/')}


def md5s_of_workspace():
    """{type: md5} of the morai_msgs classes the sourced workspace generated."""
    import morai_msgs.msg
    import morai_msgs.srv
    out = {}
    for name in dir(morai_msgs.msg):        # messages (some are named ...Response)
        cls = getattr(morai_msgs.msg, name)
        if hasattr(cls, '_md5sum'):
            out[cls._type] = cls._md5sum
    for name in dir(morai_msgs.srv):        # services, not their Request / Response classes
        cls = getattr(morai_msgs.srv, name)
        if hasattr(cls, '_request_class'):
            out[cls._type] = cls._md5sum
    return out


def md5s_of_master(timeout=3.0):
    """{type: md5} of the morai_msgs topics published on the running ROS master (one message each,
    its connection header)."""
    import time
    import rospy
    rospy.init_node('msg_sets_which', anonymous=True, disable_signals=True)
    topics = [(t, ty) for t, ty in rospy.get_published_topics() if ty.startswith('morai_msgs/')]
    headers = {}
    subs = [rospy.Subscriber(t, rospy.AnyMsg, lambda m, ty=ty: headers.setdefault(ty, m._connection_header['md5sum']))
            for t, ty in topics]
    end = time.monotonic() + timeout
    while time.monotonic() < end and len(headers) < len({ty for _, ty in topics}):
        time.sleep(0.05)
    for sub in subs:
        sub.unregister()
    return headers


def which(md5s):
    """[(set, types that match, types compared)] of the sets the md5 sums fit, best first."""
    out = []
    for s in SETS:
        known = md5_of_set(s)
        compared = [t for t in md5s if t in known]
        out.append((s, sum(1 for t in compared if known[t] == md5s[t]), len(compared), len(md5s)))
    return sorted(out, key=lambda r: (r[1] < r[2], -r[1], SETS.index(r[0])))


def fitting_sets(rows):
    """The sets of :func:`which`'s rows in which every type compared is identical, oldest first."""
    return sorted((s for s, match, compared, total in rows if compared and match == compared == total), key=SETS.index)


def workspace_set():
    """The set the sourced workspace built, or None (no workspace sourced, or not one set's)."""
    try:
        fits = fitting_sets(which(md5s_of_workspace()))
    except ImportError:
        return None
    return fits[-1] if fits else None


def print_which(what, md5s, bag=None, built=None):
    """Print which set ``md5s`` fits; for a ``bag`` of another set than the workspace's (``built``),
    name both ways to use it: moving the bag to the built set with morai_bag_fix, or building its set."""
    if not md5s:
        print(f'{what}: no morai_msgs type')
        return 1
    rows = which(md5s)
    fits = fitting_sets(rows)
    for s, match, compared, total in rows:
        print('  set %s: %d of %d types identical%s' % (s, match, total, '' if compared == total else
                                                         ' (%d not in this set)' % (total - compared)))
    if not fits:
        return print_mismatch(what, md5s, rows[0][0])
    build = 'catkin_make -DMORAI_MSGS_SET=%s (or MORAI_MSGS_SET=%s bash tools/dev.sh ...)' % (fits[-1], fits[-1])
    if bag is None:
        print('%s: message set %s; build it with %s' % (what, ' or '.join(fits), build))
    elif built in fits:
        print('%s: message set %s; this workspace builds set %s: play it as it is' % (what, ' or '.join(fits), built))
    else:
        out = '%s.set%s.bag' % (bag[:-4] if bag.endswith('.bag') else bag, built or 'N')
        print('%s: message set %s; not this workspace\'s (%s): rosrun morai_msgs morai_bag_fix %s %s moves the bag '
              'to the built set; or build its set with %s' % (
                  what, ' or '.join(fits), 'set %s' % built if built else 'none sourced: source <(bash tools/dev.sh '
                  'env) first; N is the set you build', bag, out, build))
    return 0


def print_mismatch(what, md5s, nearest):
    """The types of ``md5s`` that set ``nearest`` does not have as they are; always 1."""
    known, variants = md5_of_set(nearest), not_carried()
    refs = set()
    for t in sorted(md5s):
        if t not in known:
            print(f'  {t}: no type of set {nearest}')
            refs.add(None)
        elif md5s[t] != known[t]:
            v = variants.get((t, md5s[t]))
            refs.add(v and f"{v['ref']} ({v['commit']})")
            print(f'  {t}: md5 {md5s[t]}, set {nearest} has {known[t]}' + (
                '' if v is None else f"; {v['repository']} {v['ref']} ({v['commit']}) has it, a layout no set "
                                     'carries'))
    if None not in refs and len(refs) == 1:
        print(f'{what}: message set {nearest} except the types above, which have the layout of branch {refs.pop()}; '
              'no set builds that layout (docs/versions.md, "the message sets")')
    else:
        print(f'{what}: no message set has all of these md5 sums (another morai_msgs release?)')
    return 1


def not_carried():
    """{(type, md5): record} of the upstream layouts no set builds (`add`'s not_carried records)."""
    return {(t, v['md5']): a for s in SETS for a in table(s).get('not_carried', ())
            for t, v in a['types'].items()}


def _set(doc='the message set'):
    return Param('set', '', doc, positional=True)


_REPO = Param('repo', 'MORAI-Autonomous/MORAI-ROS_morai_msgs', 'the upstream GitHub repository', metavar='REPO')
_COMMIT = Param('commit', None, 'the upstream commit', required=True, metavar='COMMIT')
_UPSTREAM = Param('upstream', '', 'the upstream morai_msgs tree', positional=True)
#: the command line (configuration.params): subcommand -> (its arguments, help)
SUBCOMMANDS = {
    'files': ([_set()], 'the .msg / .srv files SET builds'),
    'md5': ([_set()], 'md5 of every type SET generates'),
    'check': ([Param('sets', [], 'the sets (default: all)', positional=True, nargs='*')],
              "our files' md5 against test/data/msg_sets/SET.json"),
    'import': ([_set(), _UPSTREAM, _COMMIT, _REPO], 'a new set from an upstream morai_msgs tree'),
    'rules': ([], 'write msg_sets/migration_rules.bmr'),
    'which': ([Param('bags', [], 'bags to look at', positional=True, nargs='*'),
               Param('master', False, "the running ROS master's publishers", switch=True)],
              'which set bags, the master or the workspace use'),
    'add': ([_set(), _UPSTREAM, _COMMIT,
             Param('ref', None, 'the branch (or tag) the commit is on', required=True, metavar='REF'), _REPO],
            'an upstream branch\'s new types carried by SET and the sets after it'),
    'fields': ([_set(), Param('sources', [], 'upstream trees', positional=True, nargs='+',
                              metavar='TREE=REPOSITORY@COMMIT')],
               "upstream's field lists of the set's types"),
}


def main(argv=None):
    a = parse_args([], argv, description=__doc__, raw_help=True, subcommands=SUBCOMMANDS, dest='cmd')
    if a.cmd == 'files':
        for name, path in sorted(resolve(a.set).items()):
            print(os.path.relpath(path, ROOT))
    elif a.cmd == 'md5':
        for name, md5 in sorted(md5_of_set(a.set).items()):
            print(name, md5)
    elif a.cmd == 'check':
        return 1 if check(a.sets or SETS) else 0
    elif a.cmd == 'which':
        code = 0
        built = workspace_set() if a.bags else None
        for bag in a.bags:
            code |= print_which(bag, md5s_of_bag(bag), bag=bag, built=built)
        if a.master:
            code |= print_which(f"the running ROS master ({os.environ.get('ROS_MASTER_URI')})", md5s_of_master())
        if not a.bags and not a.master:
            code |= print_which('this workspace', md5s_of_workspace())
        return code
    elif a.cmd == 'rules':
        with open(RULES, 'w') as f:
            f.write(migration_rules())
        print('wrote', os.path.relpath(RULES, ROOT))
    elif a.cmd == 'fields':
        write_field_lists(a.set, [tuple(x.split('=', 1)) for x in a.sources])
    elif a.cmd == 'add':
        return 1 if add_types(a.set, a.upstream, a.commit, a.ref, a.repo) else 0
    else:
        return 1 if import_set(a.set, a.upstream, a.commit, a.repo) else 0
    return 0


if __name__ == '__main__':
    sys.exit(main())
