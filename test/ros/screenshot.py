"""Screenshots of a headless X server and what the RViz test looks for in them.

Xvfb started with ``-fbdir DIR`` keeps its screen in ``DIR/Xvfb_screen0`` as an
XWD file (memory-mapped: reading it gives the current screen), so no X client
tool (xwd, import) is needed; :func:`read_xwd` decodes it with numpy.
"""
import os
import signal
import struct
import subprocess
import tempfile

import numpy as np

XWD_HEADER = ('header_size file_version pixmap_format pixmap_depth pixmap_width pixmap_height xoffset '
              'byte_order bitmap_unit bitmap_bit_order bitmap_pad bits_per_pixel bytes_per_line visual_class '
              'red_mask green_mask blue_mask bits_per_rgb colormap_entries ncolors window_width window_height '
              'window_x window_y window_bdrwidth').split()
BACKGROUND = (48, 48, 48)     # rviz/morai.rviz: Background Color


def read_xwd(path):
    """An XWD file (ZPixmap, 24/32 bits per pixel, TrueColor) -> uint8 array of shape (h, w, 3)."""
    with open(path, 'rb') as f:
        data = f.read()
    h = dict(zip(XWD_HEADER, struct.unpack('>25I', data[:100])))
    if h['file_version'] != 7 or h['pixmap_format'] != 2 or h['bits_per_pixel'] not in (24, 32):
        raise ValueError('%s: unsupported XWD (version %d, format %d, %d bpp)' % (
            path, h['file_version'], h['pixmap_format'], h['bits_per_pixel']))
    start = h['header_size'] + 12 * h['ncolors']
    width, height, bpl = h['pixmap_width'], h['pixmap_height'], h['bytes_per_line']
    raw = np.frombuffer(data, dtype=np.uint8, count=bpl * height, offset=start).reshape(height, bpl)
    nbytes = h['bits_per_pixel'] // 8
    px = raw[:, :width * nbytes].reshape(height, width, nbytes).astype(np.uint32)
    order = range(nbytes) if h['byte_order'] == 0 else range(nbytes - 1, -1, -1)   # 0 = LSBFirst
    value = np.zeros((height, width), dtype=np.uint32)
    for shift, k in enumerate(order):
        value |= px[:, :, k] << (8 * shift)
    out = np.empty((height, width, 3), dtype=np.uint8)
    for c, mask in enumerate((h['red_mask'], h['green_mask'], h['blue_mask'])):
        lsb = (mask & -mask).bit_length() - 1
        top = mask >> lsb
        out[:, :, c] = ((value & mask) >> lsb) * 255 // max(top, 1)
    return out


class HeadlessX(object):
    """Xvfb on a free display number, its screen readable with :meth:`screenshot`."""

    def __init__(self, width=1280, height=800):
        self.dir = tempfile.mkdtemp(prefix='morai_xvfb_')
        r, w = os.pipe()
        self.proc = subprocess.Popen(['Xvfb', '-displayfd', str(w), '-screen', '0', '%dx%dx24' % (width, height),
                                      '-fbdir', self.dir, '-nolisten', 'tcp', '-noreset', '-nocursor'],
                                     pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(w)
        number = b''
        with os.fdopen(r, 'rb') as f:
            number = f.readline().strip()
        if not number:
            err = self.proc.stderr.read().decode(errors='replace') if self.proc.poll() is not None else ''
            raise RuntimeError('Xvfb did not start: %s' % err[-500:])
        self.display = ':' + number.decode()

    def screenshot(self):
        return read_xwd(os.path.join(self.dir, 'Xvfb_screen0'))

    def close(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


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
        problems.append('the screen is blank (pixel standard deviation %.1f)' % img.std())
    area = render_area(img)
    if area is None:
        problems.append('no 3D view: no region of the background colour %s' % (BACKGROUND,))
        return {}, area, problems
    x0, y0, x1, y1 = area
    view = img[y0:y1, x0:x1]
    counts = dict((name, count_color(view, rgb)) for name, rgb in expected.items())
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
