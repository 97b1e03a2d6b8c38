#!/usr/bin/python3
"""A picture of RViz on a machine without a screen (over SSH, in CI): Xvfb, rviz, a PNG.

    bash tools/dev.sh snapshot view.png sensors:=true                 # the sensor demo, started for it
    python3 tools/rviz_snapshot.py --demo view.png sensors:=true      # the same, in a sourced shell
    python3 tools/rviz_snapshot.py rviz.png                           # what already runs, after 15 s
    python3 tools/rviz_snapshot.py view.png --config my.rviz --after 30 --size 1920x1080

With ``--demo`` it starts ``roslaunch morai_msgs demo.launch`` with the arguments after the PNG's
name (a master of its own when none runs), waits for /Ego_topic, takes the picture and stops the demo.
Without it, it needs a running ROS master with something to show (the demo, a bridge, a replay).
Either way it needs the sourced workspace (``source <(bash tools/dev.sh env)``; ``tools/dev.sh
snapshot`` does that); Xvfb and rviz come with tools/deb-packages.txt.  It starts Xvfb on a free
display (``-fbdir``: the screen is a file, so no X client tool is needed), rviz on it with Mesa's
software OpenGL, waits, writes the PNG, stops both, prints rviz's warnings, each known harmless one
with what it means (docs/day_one.md), and reads the Displays panel: the status line says whether any
display shows an error or a warning (rviz draws their names in its error red / warning orange).
Exit status 0 when the picture is not blank and, with ``--demo``, no display shows an error; 1 when
it is blank, rviz died or (``--demo``) a display is in error; 2 on a usage error.
"""
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, 'rviz', 'morai.rviz')
sys.path.insert(0, os.path.join(ROOT, 'src'))

from morai_bridge.configuration.params import Param, command_line  # noqa: E402

XWD_HEADER = ('header_size file_version pixmap_format pixmap_depth pixmap_width pixmap_height xoffset '
              'byte_order bitmap_unit bitmap_bit_order bitmap_pad bits_per_pixel bytes_per_line visual_class '
              'red_mask green_mask blue_mask bits_per_rgb colormap_entries ncolors window_width window_height '
              'window_x window_y window_bdrwidth').split()

#: what rviz prints on a machine like this one that is not a problem: (pattern, what it means).
#: Seen with rviz 1.14 on Debian 12 under Xvfb and Mesa llvmpipe (docs/day_one.md lists them).
HARMLESS = (
    (r'XDG_RUNTIME_DIR not set', 'Qt found no per-user runtime directory (no desktop login, e.g. SSH or '
     'root) and uses one under /tmp'),
    (r'no such package media_export', 'rviz asks rospack for the optional media_export package (extra Ogre '
     'media paths); Debian does not package it, and rviz uses its own media'),
    (r'\[librospack\]: error while executing command', 'the same rospack query as media_export'),
    (r'Forcing OpenGl version 0', 'rviz was given no --opengl version: it takes what the driver offers'),
    (r'Stereo is NOT SUPPORTED', 'the display has no stereo (3D glasses) mode'),
    (r'limited to GLSL 1\.4 on Mesa', 'rviz caps shaders on Mesa; every display of rviz/morai.rviz works with it'),
    (r'X connection to .* broken|The X11 connection broke', 'printed when the X server stops first (here: '
     'after the picture is taken, or when xvfb-run ends)'),
)


#: the text colours rviz 1.14 gives a display's name in the Displays panel (rviz/properties/status_property):
#: error red and warning orange (measured on its screenshots; an OK display is blue, a property black)
STATUS_COLOURS = {'error': (192, 32, 32), 'warn': (192, 128, 0)}
#: pixels of a colour that make a status: a display name is ~100 pixels of its colour
STATUS_MIN_PIXELS = 30


def panel_status(img):
    """(status, pixels) of rviz's Displays panel in screenshot ``img`` (h, w, 3): 'error' when a display name
    is drawn in the error colour, else 'warn' for the warning colour, else 'ok'.  The panel is the left
    column above the camera panel (morai.rviz's layout: x < 190 px, y between the tool bar and 55 %)."""
    h = img.shape[0]
    panel = img[60:int(h * 0.55), :190].reshape(-1, 3)
    counts = {k: int(np.all(panel == np.array(c, dtype=panel.dtype), axis=1).sum()) for k, c in STATUS_COLOURS.items()}
    for k in ('error', 'warn'):
        if counts[k] >= STATUS_MIN_PIXELS:
            return k, counts
    return 'ok', counts


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


class HeadlessX:
    """Xvfb on a free display number, its screen readable with :meth:`screenshot`."""

    def __init__(self, width=1280, height=800):
        self.dir = tempfile.mkdtemp(prefix='morai_xvfb_')
        r, w = os.pipe()
        self.proc = subprocess.Popen(['Xvfb', '-displayfd', str(w), '-screen', '0', '%dx%dx24' % (width, height),
                                      '-fbdir', self.dir, '-nolisten', 'tcp', '-noreset', '-nocursor'],
                                     pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(w)
        with os.fdopen(r, 'rb') as f:
            number = f.readline().strip()
        if not number:
            err = self.proc.stderr.read().decode(errors='replace') if self.proc.poll() is not None else ''
            raise RuntimeError(f'Xvfb did not start: {err[-500:]}')
        self.display = ':' + number.decode()

    def screenshot(self):
        return read_xwd(os.path.join(self.dir, 'Xvfb_screen0'))

    def close(self):
        stop(self.proc)
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)


def stop(proc, timeout=10.0):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def classify(lines):
    """rviz's output lines that are not INFO -> [(line, meaning or None when not known harmless)]."""
    out = []
    for line in lines:
        text = re.sub(r'\x1b\[[0-9;]*m', '', line).strip()
        if not text or text.startswith('[ INFO]'):
            continue
        meaning = next((m for p, m in HARMLESS if re.search(p, text)), None)
        out.append((text, meaning))
    return out


def size(text):
    m = re.match(r'^(\d+)x(\d+)$', text)
    if not m or not (320 <= int(m.group(1)) <= 8192 and 240 <= int(m.group(2)) <= 8192):
        raise ValueError(f'{text!r}: expected WIDTHxHEIGHT, e.g. 1280x800')
    return int(m.group(1)), int(m.group(2))


def master_online():
    import rosgraph
    return rosgraph.Master('/rviz_snapshot').is_online()


class Demo:
    """``roslaunch morai_msgs demo.launch ARGS`` in a process group of its own (a master of its own when
    none runs), until :meth:`stop`."""

    def __init__(self, args, log):
        self.proc = subprocess.Popen(['roslaunch', 'morai_msgs', 'demo.launch', 'output:=log'] + list(args),
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_for_ego(self, timeout):
        """True once /Ego_topic is published (the demo is up)."""
        import rosgraph
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                if any(t == '/Ego_topic' for t, _ in rosgraph.Master('/rviz_snapshot').getPublishedTopics('/')):
                    return True
            except OSError:
                pass            # the master is still starting
            time.sleep(0.5)
        return False

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


#: the command line (configuration.params)
PARAMS = [
    Param('output', '', 'the PNG to write', positional=True),
    Param('demo_args', [], 'with --demo: arguments of demo.launch (sensors:=true, sim_version:=..., ...)',
          positional=True, nargs='*', metavar='NAME:=VALUE'),
    Param('demo', False, 'start the demo (demo.launch with the arguments given), picture it, stop it', switch=True),
    Param('config', CONFIG, 'rviz configuration (default: rviz/morai.rviz)', metavar='CONFIG'),
    Param('after', 15.0, 'seconds between starting rviz and the picture (default 15: rviz with software '
          'OpenGL takes 5-10 s to show the first frame)', minimum=0.0, metavar='AFTER'),
    Param('size', (1280, 800), 'screen WIDTHxHEIGHT (default 1280x800)', kind=str, check=size, metavar='SIZE'),
]


def main(argv=None):
    ap = command_line(PARAMS, description=__doc__.split('\n\n')[0], raw_help=True)
    args = ap.parse_args(argv)
    if not os.path.isfile(args.config):
        ap.error(f'--config {args.config}: no such file')
    if not args.output.lower().endswith('.png'):
        ap.error(f'{args.output}: the picture is written as PNG; give a name ending in .png')
    if args.demo_args and not args.demo:
        ap.error(f'{args.demo_args[0]}: launch arguments are for --demo')
    bad = [a for a in args.demo_args if ':=' not in a]
    if bad:
        ap.error(f'{bad[0]}: demo arguments are NAME:=VALUE')
    try:
        online = master_online()
    except ImportError:
        ap.error('rosgraph not found: source the workspace first (source <(bash tools/dev.sh env))')
    demo = None
    if args.demo:
        demo_log = tempfile.NamedTemporaryFile(mode='w+', prefix='rviz_snapshot_demo_', suffix='.log', delete=False)
        demo = Demo(args.demo_args, demo_log)
        if not demo.wait_for_ego(90.0):
            demo.stop()
            print('rviz_snapshot: the demo published no /Ego_topic within 90 s (its output: %s)' % demo_log.name,
                  file=sys.stderr)
            return 1
    elif not online:
        ap.error('no ROS master at %s: start what rviz should show first (bash tools/dev.sh demo, a bridge, '
                 'a replay), or give --demo' % os.environ.get('ROS_MASTER_URI', 'http://localhost:11311'))
    try:
        return picture(args, demo is not None)
    finally:
        if demo is not None:
            demo.stop()


def picture(args, strict):
    """rviz on Xvfb, the PNG, the report; the exit status (``strict``: a display in error fails)."""
    x = HeadlessX(*args.size)
    log = tempfile.TemporaryFile(mode='w+')
    rviz = subprocess.Popen(['rviz', '-d', args.config], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, DISPLAY=x.display, LIBGL_ALWAYS_SOFTWARE='1'))
    try:
        end = time.monotonic() + args.after
        while time.monotonic() < end and rviz.poll() is None:
            time.sleep(0.2)
        died = rviz.poll()
        img = x.screenshot()
    finally:
        stop(rviz)
        x.close()
    from PIL import Image
    Image.fromarray(img).save(args.output)
    log.seek(0)
    for text, meaning in classify(log.read().splitlines()):
        print('rviz: %s%s' % (text, '  [harmless: %s]' % meaning if meaning else ''))
    if died is not None:
        print('rviz_snapshot: rviz exited with status %d before the picture; %s shows what was on the screen'
              % (died, args.output), file=sys.stderr)
        return 1
    if img.std() < 5.0:
        print('rviz_snapshot: %s is blank (pixel standard deviation %.1f): rviz drew nothing in %.0f s; '
              'try a longer --after' % (args.output, img.std(), args.after), file=sys.stderr)
        return 1
    print('rviz_snapshot: %s (%dx%d, %.0f s after rviz started)' % (args.output, args.size[0], args.size[1],
                                                                   args.after))
    status, counts = panel_status(img)
    print('rviz_snapshot: Displays panel %s (pixels in the error colour %d, warning colour %d)'
          % ({'ok': 'shows no error or warning', 'warn': 'shows a WARNING', 'error': 'shows an ERROR'}[status],
             counts['error'], counts['warn']))
    return 1 if strict and status == 'error' else 0


if __name__ == '__main__':
    sys.exit(main())
