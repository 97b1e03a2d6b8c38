"""morai_bag_fix: a bag of one morai_msgs message set, migrated to the sourced workspace's set.

    rosrun morai_msgs morai_bag_fix IN.bag OUT.bag [MORE_RULES.bmr ...] [--plugins] [--force]

It is ``rosbag fix IN.bag OUT.bag $(rospack find morai_msgs)/msg_sets/migration_rules.bmr``: rosbag's
own migration (``MessageMigrator``, ``fixbag2``) with the package's rules (docs/versions.md, "Moving
between sets"), and one difference that makes it work on Python 3.13 (Debian 13).

rosbag writes some rules itself while it migrates (``MessageMigrator.make_update_rule`` and the two
half-rule makers): each builds the text of a class, runs ``exec(text)`` and returns
``locals()[name]``.  Up to Python 3.12, ``exec`` without a namespace writes into the function's
locals dictionary, which ``locals()`` returns again.  Since 3.13 (PEP 667) each ``locals()`` call in
a function is a new snapshot that does not hold what ``exec`` defined, so every migration stops
with ``KeyError: 'update_morai_msgs_..._<md5>'``.  :func:`install` gives rosbag's migration module
its own ``exec`` and ``locals`` (module globals come before the builtins): an ``exec`` without a
namespace runs the text in a new dictionary, and the ``locals()`` that follows returns it.  Calls
with a namespace (how rosbag loads rule files) go to the builtin unchanged.  rosbag's text, and so
every rule, is the same as Python 3.11 makes it (test/unit/ros/recordings/test_bag_fix.py compares them); it is
installed on every Python, so Debian 12 runs the path Debian 13 needs.

``--plugins`` also loads the rule files other packages export to rosbag (what ``rosbag fix`` does
unless given ``-n``); rospkg finds those only with a rosdep database (``rosdep init``, ``rosdep
update``), and the package's own file is read either way.  Exit status: 0 when the bag was written,
1 when a type has no migration (listed, as rosbag lists them; nothing is written), 2 on a usage
error or a file that cannot be read.
"""
import builtins
import os
import sys
import threading

from morai_bridge.configuration.params import Param, command_line

RULES = os.path.join('msg_sets', 'migration_rules.bmr')

_made = threading.local()


def _exec(source, globals=None, locals=None):
    """``exec`` as rosbag's migration module calls it (see the module docstring)."""
    if globals is not None:
        return builtins.exec(source, globals, globals if locals is None else locals)
    namespace = {}
    builtins.exec(source, sys._getframe(1).f_globals, namespace)
    _made.namespace = namespace
    return None


def _locals():
    """``locals()`` after :func:`_exec`: the caller's locals and what that exec defined (once)."""
    out = dict(sys._getframe(1).f_locals)
    out.update(_made.__dict__.pop('namespace', {}))
    return out


def install(migration=None):
    """Give rosbag's migration module (``rosbag.migration`` by default) the ``exec`` / ``locals``
    above; returns the module.  Idempotent."""
    if migration is None:
        from rosbag import migration
    migration.exec = _exec
    migration.locals = _locals
    return migration


def package_rules():
    """The path of msg_sets/migration_rules.bmr of the morai_msgs that rospack finds."""
    import rospkg
    return os.path.join(rospkg.RosPack().get_path('morai_msgs'), RULES)


#: the command line (configuration.params)
OPTIONS = [
    Param('in_bag', '', 'the bag recorded under another message set', positional=True),
    Param('out_bag', '', 'the bag to write, in this workspace\'s message set (.bag)', positional=True),
    Param('rules', [], 'more rule files (.bmr), after the package\'s own', positional=True, nargs='*'),
    Param('plugins', False, 'also load the rule files other packages export to rosbag (needs a rosdep database)',
          switch=True),
    Param('force', False, 'write the bag even when a type has no migration (as rosbag fix --force)', switch=True),
]


def _parser():
    return command_line(OPTIONS, prog='morai_bag_fix', description='rosbag fix with the morai_msgs message sets\' '
                        'migration rules, working on Python 3.13 too (docs/versions.md, "Moving between sets")')


def main(argv=None):
    args = _parser().parse_args(argv)
    if not args.out_bag.endswith('.bag'):
        sys.stderr.write(f'morai_bag_fix: the output must be a .bag file, not {args.out_bag}\n')
        return 2
    import rospkg
    try:
        rules = [package_rules()] + args.rules
    except rospkg.ResourceNotFound:
        sys.stderr.write('morai_bag_fix: rospack finds no morai_msgs package: source a workspace first\n')
        return 2
    for path in [args.in_bag] + rules:
        if not os.access(path, os.R_OK):
            sys.stderr.write(f'morai_bag_fix: cannot read {path}\n')
            return 2
    migration = install()
    from rosbag.rosbag_main import print_trans
    migrator = migration.MessageMigrator(rules, plugins=args.plugins)
    partial = args.out_bag + '.tmp'
    try:
        missing = migration.fixbag2(migrator, args.in_bag, partial, args.force)
    except Exception:
        if os.path.exists(partial):
            os.remove(partial)
        raise
    if missing:
        print(f'morai_bag_fix: {args.in_bag} could not be migrated; no migration for:')
        for path, invalid in missing:
            print_trans(path[0].old_class, path[-1].new_class, 0)
            for rule in invalid:
                print_trans(rule.old_class, rule.new_class, 1)
        return 1
    os.replace(partial, args.out_bag)
    print(f'morai_bag_fix: wrote {args.out_bag}: {changes(args.in_bag, args.out_bag)}')
    return 0


def changes(in_bag, out_bag):
    """'N messages; Type md5 -> md5, ...' of what the fix changed (or 'no type changed')."""
    import rosbag
    with rosbag.Bag(in_bag) as a, rosbag.Bag(out_bag) as b:
        old, new = a.get_type_and_topic_info().msg_types, b.get_type_and_topic_info().msg_types
        count = b.get_message_count()
    moved = ['%s %s -> %s' % (t, old[t][:8], new[t][:8]) for t in sorted(old) if new.get(t) not in (None, old[t])]
    return '%d messages; %s' % (count, ', '.join(moved) or 'no type changed')
