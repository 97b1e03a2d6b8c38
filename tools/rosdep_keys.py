#!/usr/bin/python3
"""Write the rosdep keys that resolve on Ubuntu 20.04 (focal) + ROS Noetic, from ros/rosdistro.

    python3 tools/rosdep_keys.py GIT_DIR [COMMIT] > test/data/rosdep_keys_noetic_focal.txt

GIT_DIR is a clone (or bare git directory) of https://github.com/ros/rosdistro; COMMIT defaults
to HEAD.  Two sections, one key a line, sorted:

[noetic]  every package released in noetic/distribution.yaml (a repository with a release
          version; its `packages` list, or the repository name when it has none) that the two
          rosdep files do not define: rosdep resolves it to ros-noetic-<name with _ as ->.  (A key
          both define is resolved by the rosdep file, which comes first in rosdep's sources.)
[focal]   every key of rosdep/base.yaml and rosdep/python.yaml with a rule for ubuntu focal: the
          `ubuntu` entry (else the any-OS `*` entry) is a list (every release), or a mapping whose
          `focal` (else `*`) entry is not null, or a mapping of installers (apt/pip/source).

test/unit/project/test_rosdep_keys.py checks package.xml against the file.  Only the key names are kept,
not what they resolve to.
"""
import os
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'src'))
from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

#: the command line (configuration.params)
PARAMS = [Param('git_dir', '', 'a clone (or bare git directory) of https://github.com/ros/rosdistro', positional=True,
                metavar='GIT_DIR'),
          Param('commit', 'HEAD', 'the rosdistro commit to read', positional=True, nargs='?', metavar='COMMIT')]

INSTALLERS = {'apt', 'pip', 'source', 'npm', 'gem', 'snap'}


def show(git_dir, commit, path):
    return subprocess.run(['git', '--git-dir', git_dir, 'show', f'{commit}:{path}'],
                          check=True, stdout=subprocess.PIPE).stdout


def noetic_packages(dist):
    out = set()
    for name, repo in (dist.get('repositories') or {}).items():
        release = repo.get('release') or {}
        if release.get('version'):
            out.update(release.get('packages') or [name])
    return out


def resolves_on_focal(rule):
    if not isinstance(rule, dict):
        return False
    ubuntu = rule['ubuntu'] if 'ubuntu' in rule else rule.get('*')
    if ubuntu is None:
        return False
    if isinstance(ubuntu, list):
        return True
    if not isinstance(ubuntu, dict):
        return False
    for release in ('focal', '*'):
        if release in ubuntu:
            return ubuntu[release] is not None
    return bool(INSTALLERS & set(ubuntu))


def main(argv=None):
    args = parse_args(PARAMS, argv, description=__doc__, raw_help=True)
    git_dir = args.git_dir
    commit = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', args.commit],
                            check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    date = subprocess.run(['git', '--git-dir', git_dir, 'log', '-1', '--format=%cI', commit],
                          check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    packages = noetic_packages(yaml.safe_load(show(git_dir, commit, 'noetic/distribution.yaml')))
    system, defined = set(), set()
    for path in ('rosdep/base.yaml', 'rosdep/python.yaml'):
        rules = yaml.safe_load(show(git_dir, commit, path))
        defined.update(rules)
        system.update(k for k, rule in rules.items() if resolves_on_focal(rule))
    packages -= defined
    print('# rosdep keys that resolve on ubuntu:focal with --rosdistro noetic (tools/rosdep_keys.py)')
    print(f'# source: https://github.com/ros/rosdistro commit {commit} ({date})')
    print('# files: noetic/distribution.yaml (released packages), rosdep/base.yaml + rosdep/python.yaml'
          ' (keys with an ubuntu focal rule)')
    print('[noetic]')
    print('\n'.join(sorted(packages)))
    print('[focal]')
    print('\n'.join(sorted(system)))


if __name__ == '__main__':
    main()
