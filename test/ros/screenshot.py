"""What the RViz test looks for in a screenshot of the headless X server.

The X server and the screen reading are the user's tool's (tools/rviz_snapshot.py: Xvfb with
``-fbdir`` keeps its screen as an XWD file, decoded with numpy); this module re-exports them.
"""
import importlib.util
import os

import numpy as np

_spec = importlib.util.spec_from_file_location(
    'rviz_snapshot', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tools', 'rviz_snapshot.py'))
snapshot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(snapshot)
XWD_HEADER, read_xwd, HeadlessX = snapshot.XWD_HEADER, snapshot.read_xwd, snapshot.HeadlessX
BACKGROUND = (48, 48, 48)     # rviz/morai.rviz: Background Color


def render_area(img, background=BACKGROUND, min_fraction=0.3):
    """Bounding box (x0, y0, x1, y1) of the 3D view: the rows and columns mostly of the
    background colour.  None when there is no such area (a blank or black screen)."""
    bg = np.all(img == np.array(background, dtype=np.uint8), axis=2)
    if bg.sum() < 0.1 * bg.size:
        return None
    rows = np.nonzero(bg.mean(axis=1) >= min_fraction)[0]
    cols = np.nonzero(bg.mean(axis=0) >= min_fraction)[0]
    if len(rows) < 50 or len(cols) < 50:
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


def count_color(img, rgb, tolerance=6):
    """Pixels within ``tolerance`` of ``rgb`` on every channel."""
    diff = np.abs(img.astype(np.int16) - np.array(rgb, dtype=np.int16))
    return int(np.all(diff <= tolerance, axis=2).sum())


def to_rgb8(rgba):
    return tuple(int(round(c * 255)) for c in rgba[:3])


def analyse(img, expected, minimum, outside=None, outside_minimum=None):
    """Counts of each expected colour in the 3D view and the list of what is wrong.

    ``expected``: name -> (r, g, b) 0..255; ``minimum``: name -> pixels needed (a name mapped
    to a tuple of names needs the sum of those).  ``outside`` / ``outside_minimum``: the same for
    colours counted everywhere on the screen except in the 3D view (the docked panels, e.g. the
    camera image); their names must differ from those of ``expected``."""
    problems = []
    if img.std() < 5.0:
        problems.append(f'the screen is blank (pixel standard deviation {img.std():.1f})')
    area = render_area(img)
    if area is None:
        problems.append(f'no 3D view: no region of the background colour {BACKGROUND}')
        return {}, area, problems
    x0, y0, x1, y1 = area
    view = img[y0:y1, x0:x1]
    counts = {name: count_color(view, rgb) for name, rgb in expected.items()}
    drawn = int((~np.all(view == np.array(BACKGROUND, dtype=np.uint8), axis=2)).sum())
    counts['not background'] = drawn
    for name, rgb in (outside or {}).items():
        counts[name] = count_color(img, rgb) - count_color(view, rgb)
    for name, need in list(minimum.items()) + list((outside_minimum or {}).items()):
        names = name if isinstance(name, tuple) else (name,)
        have = sum(counts[n] for n in names)
        if have < need:
            where = 'outside the 3D view' if names[0] in (outside or {}) else 'in the 3D view'
            problems.append('%s: %d pixels of its colour %s, expected at least %d' % (
                '+'.join(names), have, where, need))
    return counts, area, problems
