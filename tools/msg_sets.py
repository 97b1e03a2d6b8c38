#!/usr/bin/env python3
"""The morai_msgs message sets (msg_sets/, docs/versions.md "Message sets"): resolve, check, import.

    tools/msg_sets.py files SET            the .msg / .srv files SET builds (what CMakeLists.txt picks)
    tools/msg_sets.py md5 SET              md5 of every type SET generates, from our files (genmsg)
    tools/msg_sets.py check [SET ...]      our files' md5 against test/data/msg_sets/SET.json
    tools/msg_sets.py import SET UPSTREAM --commit C [--repo R]
                                           a new set from an upstream morai_msgs tree: its md5 table
                                           (test/data/msg_sets/SET.json) and the layer msg_sets/SET/
                                           (the types new or changed since the set before)

A set is a layer over the sets before it, in the order of SETS: msg_sets/<set>/msg and /srv hold the
definitions that set adds or changes, msg_sets/<set>/dropped.txt the types it no longer has.  The
files the import writes hold upstream's field lists (facts) without its comments; comments in our
files are ours.  md5 sums come from genmsg, as catkin computes them.  No ROS master is needed.
"""
import argparse
import json
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS_DIR = os.path.join(ROOT, 'msg_sets')
TABLES = os.path.join(ROOT, 'test', 'data', 'msg_sets')
#: every set, oldest first: each layers over the ones before it
SETS = ('2022', '2024', '2026')
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
        raise SystemExit('unknown message set %r (known: %s)' % (set_name, ', '.join(SETS)))
    files = {}
    for layer in SETS[:SETS.index(set_name) + 1]:
        for name in dropped(layer):
            files.pop(name, None)
        files.update(layer_files(layer))
    return files


def md5_of_tree(msg_files, srv_files, parts=False):
    """{'morai_msgs/Name': md5} of .msg and .srv files (paths), as genmsg computes them; with
    ``parts``, a service's value is (md5, request md5, response md5)."""
    import genmsg
    import genmsg.msg_loader as loader
    import rospkg
    rospack = rospkg.RosPack()
    msg_dirs = sorted({os.path.dirname(p) for p in msg_files})
    search = {'morai_msgs': msg_dirs}
    for pkg in ('std_msgs', 'geometry_msgs'):
        search[pkg] = [os.path.join(rospack.get_path(pkg), 'msg')]
    ctx = genmsg.MsgContext.create_default()
    out = {}
    for path in msg_files:
        name = 'morai_msgs/' + os.path.basename(path)[:-4]
        spec = loader.load_msg_from_file(ctx, path, name)
        loader.load_depends(ctx, spec, search)
        out[name] = genmsg.compute_md5(ctx, spec)
    for path in srv_files:
        name = 'morai_msgs/' + os.path.basename(path)[:-4]
        spec = loader.load_srv_from_file(ctx, path, name)
        loader.load_depends(ctx, spec.request, search)
        loader.load_depends(ctx, spec.response, search)
        md5 = genmsg.compute_md5(ctx, spec)
        out[name] = (md5, genmsg.compute_md5(ctx, spec.request), genmsg.compute_md5(ctx, spec.response)) \
            if parts else md5
    return out


def md5_of_set(set_name, parts=False):
    """md5 of every type of the set, from our files (one directory per kind, as catkin sees them
    after CMakeLists.txt has copied them); ``parts``: as :func:`md5_of_tree`."""
    files = resolve(set_name)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {'msg': [], 'srv': []}
        for name, path in files.items():
            kind = path[-3:]
            os.makedirs(os.path.join(tmp, kind), exist_ok=True)
            target = os.path.join(tmp, kind, os.path.basename(path))
            os.symlink(path, target)
            paths[kind].append(target)
        return md5_of_tree(sorted(paths['msg']), sorted(paths['srv']), parts)


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
                print('%s %s: ours %s, upstream %s' % (s, name, got.get(name), want.get(name)))
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


def import_set(set_name, upstream, commit, repo):
    types = upstream_types(upstream)
    found = md5_of_tree(sorted(p for p in types.values() if p.endswith('.msg')),
                        sorted(p for p in types.values() if p.endswith('.srv')), parts=True)
    md5 = {k: v[0] if isinstance(v, tuple) else v for k, v in found.items()}
    entries = {}
    for k, v in sorted(found.items()):
        if isinstance(v, tuple):
            entries[k] = {'kind': 'srv', 'md5': v[0], 'request_md5': v[1], 'response_md5': v[2]}
        else:
            entries[k] = {'kind': 'msg', 'md5': v}
    os.makedirs(TABLES, exist_ok=True)
    with open(os.path.join(TABLES, set_name + '.json'), 'w') as f:
        json.dump({'set': set_name, 'repository': repo, 'commit': commit,
                   'about': 'md5 of every type upstream generates at that commit (genmsg over the '
                            'files its CMakeLists.txt lists); tools/msg_sets.py import wrote it',
                   'types': entries}, f, indent=1, sort_keys=True)
        f.write('\n')
    before = SETS[SETS.index(set_name) - 1]
    old = md5_of_set(before)
    layer = os.path.join(SETS_DIR, set_name)
    written = 0
    for name, path in sorted(types.items()):
        if old.get('morai_msgs/' + name) == md5['morai_msgs/' + name]:
            continue
        kind = path[-3:]
        os.makedirs(os.path.join(layer, kind), exist_ok=True)
        header = '# morai_msgs/%s, set %s: the field list of %s at %s' % (name, set_name, repo, commit)
        with open(os.path.join(layer, kind, name + '.' + kind), 'w') as f:
            f.write(field_text(path, header))
        written += 1
    gone = sorted(k.split('/')[1] for k in old if k.split('/')[1] not in types)
    with open(os.path.join(layer, 'dropped.txt'), 'w') as f:
        f.write('# types of set %s that set %s no longer has\n' % (before, set_name))
        f.writelines(name + '\n' for name in gone)
    print('%s: %d types, %d written to msg_sets/%s, %d dropped' % (set_name, len(types), written,
                                                                     set_name, len(gone)))
    return check([set_name])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    sub.add_parser('files').add_argument('set')
    sub.add_parser('md5').add_argument('set')
    sub.add_parser('check').add_argument('sets', nargs='*')
    imp = sub.add_parser('import')
    imp.add_argument('set')
    imp.add_argument('upstream')
    imp.add_argument('--commit', required=True)
    imp.add_argument('--repo', default='MORAI-Autonomous/MORAI-ROS_morai_msgs')
    a = ap.parse_args(argv)
    if a.cmd == 'files':
        for name, path in sorted(resolve(a.set).items()):
            print(os.path.relpath(path, ROOT))
    elif a.cmd == 'md5':
        for name, md5 in sorted(md5_of_set(a.set).items()):
            print(name, md5)
    elif a.cmd == 'check':
        return 1 if check(a.sets or SETS) else 0
    else:
        return 1 if import_set(a.set, a.upstream, a.commit, a.repo) else 0
    return 0


if __name__ == '__main__':
    sys.exit(main())
