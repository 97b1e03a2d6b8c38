"""What a replay says about the datagrams it skipped (ros/recordings/capture_player.py): the stream a datagram
is, and the port hint naming the version or parameter that receives it."""
from morai_bridge.ros.recordings.capture_player import carried_stream, port_hint
from morai_bridge.configuration import sim_versions
from morai_bridge.wire import udp

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
