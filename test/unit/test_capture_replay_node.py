"""capture_replay's ~file: a relative path is found where the user typed the command (roslaunch
starts nodes in ~/.ros), or the error names every place it looked."""
import os

import pytest

from morai_bridge.configuration.params import ParamError
from morai_bridge.nodes.capture_replay import input_path


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
    assert text.startswith('~file=MORAI.pcap: no such file in %s nor in %s' % (tmp_path, ros_home))
    assert 'absolute path' in text and os.path.basename(str(ros_home)) in text


def test_same_directory_is_named_once(tmp_path):
    with pytest.raises(ParamError) as e:
        input_path('MORAI.pcap', cwd=str(tmp_path), caller=str(tmp_path))
    assert ' nor in ' not in str(e.value)


# --- what a replay says about the datagrams it skipped (ros/capture_player.py) ---

from morai_bridge.configuration import sim_versions
from morai_bridge.ros.capture_player import carried_stream, port_hint  # noqa: E402
from morai_bridge.wire import udp  # noqa: E402

GGA = b'$GPGGA,223047.5,3714.4040,N,12646.4377,E,1,09,1.0,29.1,M,0.0,M,,*5A\r\n'


def test_carried_stream_names_what_a_datagram_is():
    assert carried_stream(GGA) == 'gps'
    assert carried_stream(udp.encode(udp.make(udp.GetTrafficLightStatus, traffic_light_index='C1'))) == \
        'traffic_light'
    assert carried_stream(b'NOTIFY * HTTP/1.1\r\n\r\n') is None
    assert carried_stream(GGA[:-6] + b'00\r\n') is None          # a bad checksum is no GPS sentence
    # a command is not something the simulator sends: no receive stream carries it
    assert carried_stream(udp.encode(udp.make(udp.EgoCtrlCmd))) is None


def test_versions_receiving_reads_the_profiles():
    assert sim_versions.versions_receiving('gps', 9091) == ['24.R2']
    assert '25.S4' in sim_versions.versions_receiving('gps', 9297)
    assert sim_versions.versions_receiving('competition_status', 909) == ['25.S4.MolitComp03']
    assert sim_versions.versions_receiving('traffic_light', 7502) == \
        sim_versions.available(sim_versions.search_dir_default())
    assert sim_versions.versions_receiving('traffic_light', 7503) == []


def test_port_hint_names_the_version_that_receives_the_stream_there():
    assert port_hint(9091, 22, 'gps', '25.S4', 9297, ['24.R2']) == (
        'port 9091: 22 gps datagrams, skipped (sim_version 25.S4: this replay has it on 9297; '
        'sim_version 24.R2 receives it on that port; sim_version:=24.R2 or gps_port:=9091 decodes them)')


def test_port_hint_without_a_version_names_the_parameter():
    assert port_hint(7777, 1, 'imu', '25.S4', 9110, []) == (
        'port 7777: 1 imu datagram, skipped (sim_version 25.S4: this replay has it on 9110; '
        'imu_port:=7777 decodes them)')
    assert port_hint(909, 3, 'competition_status', '25.S4', 0, ['25.S4.MolitComp03']).endswith(
        'this replay has it disabled; sim_version 25.S4.MolitComp03 receives it on that port; '
        'sim_version:=25.S4.MolitComp03 or competition_status_port:=909 decodes them)')

