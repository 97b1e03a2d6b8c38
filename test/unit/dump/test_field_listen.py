"""Where morai_field_report listens (src/morai_bridge/dump/field_listen.py): the ports of MORAI's saved
settings; listening on the profiles' ports against the emulator: test_field_report.py."""
from pathlib import Path

import helpers
from morai_bridge.dump import field_listen as fl

ROOT = Path(helpers.ROOT)


def test_the_ports_of_morais_saved_settings():
    """heven-ad-2026's 25.S4 competition settings: every UDP stream and sensor destination port."""
    data = ROOT / "test" / "data" / "morai_settings"
    ports, sensors, warnings = fl.settings_ports(str(data / "heven_SensorInfo_2023_Hyundai_Ioniq5.json"),
                                                 str(data / "heven_NetworkInfo_2023_Hyundai_Ioniq5.template.json"))
    assert ports == [1909, 1911, 2368, 7505, 9092, 9291, 9293, 9295, 9297, 9299, 9307]
    assert sensors == {9291: "camera", 9293: "camera", 9295: "camera", 9307: "camera", 2368: "lidar"}
