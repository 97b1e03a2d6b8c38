"""capture_replay's ~file: a relative path is found where the user typed the command (roslaunch
starts nodes in ~/.ros), or the error names every place it looked.  What a replay says about the
datagrams it skipped: ros/test_capture_player.py."""
import os

import pytest

from morai_bridge.nodes.capture_replay import input_path
from morai_bridge.configuration.params import ParamError


def test_absolute_path_is_kept(tmp_path):
    assert input_path(str(tmp_path / 'x.pcap'), cwd='/nowhere', caller='/nowhere') == str(tmp_path / 'x.pcap')


def test_relative_path_found_in_the_callers_directory(tmp_path):
    (tmp_path / 'drive.pcap').write_bytes(b'')
    ros_home = tmp_path / 'ros_home'
    ros_home.mkdir()
    assert input_path('drive.pcap', cwd=str(ros_home), caller=str(tmp_path)) == str(tmp_path / 'drive.pcap')


def test_relative_path_in_the_working_directory_as_rosrun_gives_it(tmp_path):
    (tmp_path / 'drive.pcap').write_bytes(b'')
    assert input_path('drive.pcap', cwd=str(tmp_path), caller='') == str(tmp_path / 'drive.pcap')


def test_missing_relative_path_names_where_it_looked(tmp_path):
    ros_home = tmp_path / 'ros_home'
    ros_home.mkdir()
    with pytest.raises(ParamError) as e:
        input_path('MORAI.pcap', cwd=str(ros_home), caller=str(tmp_path))
    text = str(e.value)
    assert text.startswith(f'~file=MORAI.pcap: no such file in {tmp_path} nor in {ros_home}')
    assert 'absolute path' in text and os.path.basename(str(ros_home)) in text


def test_same_directory_is_named_once(tmp_path):
    with pytest.raises(ParamError) as e:
        input_path('MORAI.pcap', cwd=str(tmp_path), caller=str(tmp_path))
    assert ' nor in ' not in str(e.value)
