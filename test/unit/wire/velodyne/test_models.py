"""wire.velodyne.models: the models as data (rings, elevations, offsets, product
ids, names), against the spec's tables typed again in test/unit/velodyne_reference.py."""

import pytest

from morai_bridge.wire import velodyne as vel
from velodyne_reference import HDL32_ELEV, VLP16_ELEV


def test_rings_and_models_as_data():
    assert vel.MODELS["VLP16"].rings == tuple((k // 2) + 8 * (k % 2) for k in range(16))
    assert vel.MODELS["HDL32E"].rings == tuple((k // 2) + 16 * (k % 2) for k in range(32))
    assert list(vel.MODELS["VLP16"].elevations_deg) == VLP16_ELEV
    assert list(vel.MODELS["HDL32E"].elevations_deg) == HDL32_ELEV
    for m in vel.MODELS.values():
        assert sorted(m.rings) == list(range(m.lasers))
        assert len(m.elevations_deg) == len(m.azimuth_offsets_deg) == m.lasers
        assert len(m.vert_offsets_m) == m.lasers
        assert len(m.slot_times_us) == 32
    assert vel.MODELS["VLP32C"].distance_resolution_m == 0.004
    assert vel.MODELS["VLP32C"].azimuth_offsets_deg[:3] == (1.4, -4.2, 1.4)
    assert [vel.MODELS[n].product_id for n in ("HDL32E", "VLP16", "PUCK_HIRES", "VLP32C")] == \
        [0x21, 0x22, 0x24, 0x28]
    assert vel.model_from_product_id(0x22).name == "VLP16"
    assert vel.model_from_product_id(0x99) is None
    assert vel.get_model("32E").name == "HDL32E" and vel.get_model("vlp-16").name == "VLP16"
    assert vel.get_model("64E_S3").name == "MORAI_64"
    with pytest.raises(ValueError):
        vel.get_model("OS1-64")


def test_port_constant():
    assert vel.DEFAULT_PORT == 2368         # spec 7: WeGo / SensorExample destination port
