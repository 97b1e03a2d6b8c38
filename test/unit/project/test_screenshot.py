"""The screenshot reading and checking of the headless RViz test (test/ros/screenshot.py), on
synthetic pictures: XWD decoding, and that a blank screen or a missing colour fails."""
import importlib.util
import os
import re
import struct

import numpy as np
import pytest

import helpers

ROOT = helpers.ROOT
_spec = importlib.util.spec_from_file_location('screenshot', os.path.join(ROOT, 'test', 'ros', 'screenshot.py'))
shot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shot)

EXPECTED = {'ego': (26, 89, 255), 'npc': (255, 128, 0)}
MINIMUM = {'ego': 20, 'npc': 20}


def write_xwd(path, img, byte_order=0, name=b'Xvfb main window\0'):
    """A ZPixmap, 32 bits per pixel, TrueColor XWD file like Xvfb's -fbdir screen."""
    h, w, _ = img.shape
    header_size = 100 + len(name)
    fields = dict(header_size=header_size, file_version=7, pixmap_format=2, pixmap_depth=24, pixmap_width=w,
                  pixmap_height=h, xoffset=0, byte_order=byte_order, bitmap_unit=32, bitmap_bit_order=byte_order,
                  bitmap_pad=32, bits_per_pixel=32, bytes_per_line=w * 4, visual_class=4, red_mask=0xff0000,
                  green_mask=0x00ff00, blue_mask=0x0000ff, bits_per_rgb=8, colormap_entries=256, ncolors=2,
                  window_width=w, window_height=h, window_x=0, window_y=0, window_bdrwidth=0)
    header = struct.pack('>25I', *(fields[k] for k in shot.XWD_HEADER)) + name
    colors = b'\0' * 24
    value = (img[:, :, 0].astype(np.uint32) << 16) | (img[:, :, 1].astype(np.uint32) << 8) | img[:, :, 2]
    data = value.astype('<u4' if byte_order == 0 else '>u4').tobytes()
    with open(path, 'wb') as f:
        f.write(header + colors + data)


def scene(ego=True, npc=True):
    img = np.full((200, 300, 3), 230, dtype=np.uint8)          # panels
    img[20:190, 80:290] = shot.BACKGROUND                      # the 3D view
    img[60:62, 80:290] = (70, 70, 72)                          # a grid line
    if ego:
        img[100:110, 150:160] = EXPECTED['ego']
    if npc:
        img[40:50, 200:215] = EXPECTED['npc']
    img[5:15, 5:15] = EXPECTED['ego']                         # the same colour outside the view is not counted
    return img


@pytest.mark.parametrize('byte_order', [0, 1])
def test_read_xwd(tmp_path, byte_order):
    img = scene()
    path = str(tmp_path / 'Xvfb_screen0')
    write_xwd(path, img, byte_order)
    assert np.array_equal(shot.read_xwd(path), img)


def test_a_good_picture_passes():
    counts, area, problems = shot.analyse(scene(), EXPECTED, MINIMUM)
    assert problems == []
    assert area == (80, 20, 290, 190)
    assert counts['ego'] == 100 and counts['npc'] == 150


@pytest.mark.parametrize('fill', [0, 255, 48])
def test_a_blank_screen_fails(fill):
    img = np.full((200, 300, 3), fill, dtype=np.uint8)
    _, _, problems = shot.analyse(img, EXPECTED, MINIMUM)
    assert problems and 'blank' in problems[0]


def test_no_3d_view_fails():
    img = np.random.RandomState(1).randint(0, 255, (200, 300, 3)).astype(np.uint8)
    _, area, problems = shot.analyse(img, EXPECTED, MINIMUM)
    assert area is None and any('no 3D view' in p for p in problems)


def test_a_missing_colour_fails():
    _, _, problems = shot.analyse(scene(ego=False), EXPECTED, MINIMUM)
    assert len(problems) == 1 and problems[0].startswith('ego: 0 pixels')
    assert problems[0].endswith('in the 3D view, expected at least 20')


SKY = (135, 190, 235)


def with_camera_panel(img, rows=30):
    img = img.copy()
    img[200 - rows - 5:195, 5:75] = SKY                       # a docked image panel, left of the view
    img[100:104, 100:104] = SKY                               # the same colour in the view is not counted
    return img


def test_colours_outside_the_view():
    counts, _, problems = shot.analyse(with_camera_panel(scene()), EXPECTED, MINIMUM, {'camera': SKY},
                                       {'camera': 1000})
    assert problems == [] and counts['camera'] == 30 * 70
    # a panel too small (e.g. an image display with no image, or in error) fails
    _, _, problems = shot.analyse(with_camera_panel(scene(), rows=5), EXPECTED, MINIMUM, {'camera': SKY},
                                  {'camera': 1000})
    assert problems == ['camera: 350 pixels of its colour outside the 3D view, expected at least 1000']
    _, _, problems = shot.analyse(scene(), EXPECTED, MINIMUM, {'camera': SKY}, {'camera': 1})
    assert problems == ['camera: 0 pixels of its colour outside the 3D view, expected at least 1']


def test_summed_minimum():
    _, _, problems = shot.analyse(scene(), EXPECTED, {('ego', 'npc'): 300})
    assert problems == ['ego+npc: 250 pixels of its colour in the 3D view, expected at least 300']


def test_palette_to_8_bit():
    assert shot.to_rgb8((0.10, 0.35, 1.00, 1.0)) == (26, 89, 255)


# --- tools/rviz_snapshot.py: rviz's messages, the harmless ones named (docs/day_one.md) ---

SEEN = [   # rviz 1.14.19 under Xvfb on Debian 12, demo.launch sensors:=true rviz:=true (2026-11-26)
    "QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-root'",
    '\x1b[0m[ INFO] [1795668080.556068089]: rviz version 1.14.19\x1b[0m',
    '\x1b[0m[ INFO] [1795668080.563658863]: Forcing OpenGl version 0.\x1b[0m',
    '[rospack] Error: no such package media_export',
    '[librospack]: error while executing command',
    '\x1b[0m[ INFO] [1795668081.411480972]: Stereo is NOT SUPPORTED\x1b[0m',
    '\x1b[0m[ INFO] [1795668081.411579167]: OpenGl version: 4.5 (GLSL 4.5) limited to GLSL 1.4 on Mesa system.\x1b[0m',
    'X connection to :99 broken (explicit kill or server shutdown).',
]


def test_rviz_messages_seen_here_are_all_known_harmless():
    tool = shot.snapshot
    out = tool.classify(SEEN + ['[ WARN] [1.0]: Fixed Frame [map] does not exist', ''])
    assert [t for t, m in out if m is None] == ['[ WARN] [1.0]: Fixed Frame [map] does not exist']
    assert [t for t, m in out if m] == [SEEN[0], SEEN[3], SEEN[4], SEEN[7]]     # INFO lines are not shown


def test_every_harmless_message_is_in_the_day_one_table():
    tool = shot.snapshot
    with open(os.path.join(ROOT, 'docs', 'day_one.md')) as f:
        rows = [line for line in f.read().splitlines() if line.startswith('| `')]
    for pattern, _ in tool.HARMLESS:
        assert any(re.search(pattern, row.replace('`', '')) for row in rows), \
            f'docs/day_one.md lists no message matching {pattern!r}'


def snapshot_tool():
    spec = importlib.util.spec_from_file_location('rviz_snapshot', os.path.join(ROOT, 'tools', 'rviz_snapshot.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize('picture, status', [
    # the sensor demo pictured before issue 43: no TF, odometry or raw image, so LiDAR displays in error
    (os.path.join('test', 'data', 'rviz', 'sensor_demo_without_tf.png'), 'error'),
    # docs/rviz_demo.png: the demo with everything, Global Status: Ok
    (os.path.join('docs', 'rviz_demo.png'), 'ok')])
def test_snapshot_tool_reads_the_displays_panel(picture, status):
    from PIL import Image
    img = np.asarray(Image.open(os.path.join(ROOT, picture)).convert('RGB'))
    assert snapshot_tool().panel_status(img)[0] == status


def test_snapshot_tool_status_colours_count_only_in_the_panel():
    tool = snapshot_tool()
    img = np.full((800, 1280, 3), 230, dtype=np.uint8)
    img[100:140, 400:900] = tool.STATUS_COLOURS['error']     # the 3D view may hold any colour
    assert tool.panel_status(img)[0] == 'ok'
    img[200:210, 40:60] = tool.STATUS_COLOURS['warn']         # 200 pixels of a warning name
    assert tool.panel_status(img)[0] == 'warn'
    img[230:240, 40:60] = tool.STATUS_COLOURS['error']
    assert tool.panel_status(img) == ('error', {'error': 200, 'warn': 200})
