"""morai_field_report's analysis (src/morai_bridge/dump/field_analysis.py) on datagrams made here; against
the emulator and the fixtures: test_field_report.py."""
import pytest

from morai_bridge.dump import field_analysis as fa
from morai_bridge.wire import udp


@pytest.mark.parametrize("knots_field, expected", [("000.0", "mps_x_0.00053995"), ("019.4", "knots")])
def test_rmc_speed_against_the_status_speed(knots_field, expected):
    """25.S4 writes RMC speed as m/s x 0.00053995 (the heven report @4d26e0e): at 10 m/s that prints
    000.0, where a correct receiver prints 19.4 knots.  The report compares RMC with the status speed."""
    from morai_bridge.wire.udp import nmea
    status = udp.make(udp.EgoVehicleStatus, 200, sec=1, nsec=0, pos_x=50.0, pos_y=20.0, signed_vel=36.0)
    rmc = nmea.build("GP", "RMC", ("044646.150", "A", "3714.5407", "N", "12646.4262", "E", knots_field, "090.0",
                                   "010826", "000.0", "E", "A", ""))
    records = []
    for k in range(12):
        records.append((100.0 + 0.1 * k, ("10.0.0.1", 908), ("10.0.0.2", 909), udp.encode(status)))
        records.append((100.0 + 0.1 * k + 0.01, ("10.0.0.1", 9296), ("10.0.0.2", 9297), nmea.encode(rmc)))
    report = fa.analyse(records)
    assert report["observed"]["rmc_speed"] == expected
    assert report["gps"]["rmc_samples_moving"] == 12
