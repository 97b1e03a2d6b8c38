"""docs/architecture.md, "Modules of one name": two modules of src/morai_bridge share a file name only
where they are one job at two layers, and every such pair is named there with the reason."""
import os
import re

import helpers

SRC = os.path.join(helpers.ROOT, 'src', 'morai_bridge')
ARCHITECTURE = os.path.join(helpers.ROOT, 'docs', 'architecture.md')


def same_named():
    """{file name: [paths relative to src/morai_bridge]} of the module names found more than once."""
    where = {}
    for dirpath, dirs, files in os.walk(SRC):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        for f in files:
            if f.endswith('.py') and f != '__init__.py':
                where.setdefault(f, []).append(os.path.relpath(os.path.join(dirpath, f), SRC))
    return {name: sorted(paths) for name, paths in where.items() if len(paths) > 1}


def test_every_pair_of_one_name_is_explained_in_the_architecture():
    with open(ARCHITECTURE, encoding='utf-8') as f:
        text = f.read()
    section = re.search(r'(?ms)^## Modules of one name\n(.*?)(?=^## )', text)
    assert section, 'docs/architecture.md has no "Modules of one name" section'
    items = re.findall(r'(?ms)^- (.*?)(?=^- |\Z)', section.group(1))
    missing = []
    for name, paths in same_named().items():
        if not any(all(f'`{p}`' in item for p in paths) for item in items):
            missing.append(' and '.join(paths))
    assert not missing, 'same file name, not explained in one item of docs/architecture.md ' \
        '"Modules of one name": ' + '; '.join(missing)
