"""Velodyne sensor models as data, and the packet constants (no ROS).

Part of :mod:`morai_bridge.wire.velodyne` (whose package exports the public names); the facts and
their confidence tags are in :mod:`morai_bridge.wire.velodyne.decode`'s docstring.
"""
from typing import Dict, NamedTuple, Optional, Tuple

import numpy as np

#: Destination port of MORAI's example configurations and Velodyne's default [C].
DEFAULT_PORT = 2368
PACKET_SIZE = 1206
BLOCKS = 12
SLOTS = 32
UPPER_BANK = 0xEEFF        # bytes FF EE
LOWER_BANK = 0xDDFF        # bytes FF DD (HDL-64 lower bank)
RETURN_STRONGEST = 0x37
RETURN_LAST = 0x38
RETURN_DUAL = 0x39
HOUR_US = 3600 * 1000000
#: A longer datagram is searched for ``FF EE`` in its first this many bytes.
AUX_HEADER_SEARCH = 64
AZ_MAX = 36000
AUTO_STEP_MAX_US = 100000     # 'auto' packet times: largest credible step between packets


class VelodyneModel(NamedTuple):
    """A sensor model as data.  Per-laser tuples are indexed by laser number
    (packet order: block slot k, + 32 for an HDL-64 lower-bank block)."""

    name: str
    description: str
    lasers: int
    elevations_deg: Tuple[float, ...]
    azimuth_offsets_deg: Tuple[float, ...]   # added to the block azimuth (manual sign)
    vert_offsets_m: Tuple[float, ...]        # ROSVEL vert_offset_correction
    distance_resolution_m: float
    product_id: Optional[int]                # byte 1205; None = not set by this model
    firings_per_block: int                   # 2: a block holds two firings of 16 lasers
    blocks_per_firing: int                   # 2: a firing spans an upper and a lower block
    firing_period_us: float                  # time between firings (columns)
    slot_times_us: Tuple[float, ...]         # 32: slot k's time after the block's first firing
    interpolate: bool                        # azimuth interpolated inside a block (VLP-16 style)
    dual_supported: bool
    nominal_packet_rate_hz: float            # single return, for sizing

    @property
    def rings(self) -> Tuple[int, ...]:
        """Ring of each laser: 0 = lowest elevation (ROSVEL numbering)."""
        order = sorted(range(self.lasers), key=lambda i: (self.elevations_deg[i], i))
        ring = [0] * self.lasers
        for r, laser in enumerate(order):
            ring[laser] = r
        return tuple(ring)

    def columns_per_packet(self, dual: bool = False) -> int:
        """Firings (columns of simultaneous azimuth) carried by one packet."""
        cols = BLOCKS * self.firings_per_block // self.blocks_per_firing
        return cols // 2 if dual else cols

    def packet_period_us(self, dual: bool = False) -> float:
        return self.columns_per_packet(dual) * self.firing_period_us


def _vlp16_slots() -> Tuple[float, ...]:
    return tuple((k // 16) * 55.296 + (k % 16) * 2.304 for k in range(SLOTS))


_ZERO16 = (0.0,) * 16
_ZERO32 = (0.0,) * 32
_ZERO64 = (0.0,) * 64
_S3_PATTERN = (0.0, 1.3, 2.5, 3.7)

_VLP32C = (  # (elevation, azimuth offset) deg per laser, spec 3.3 [C]
    (-25, 1.4), (-1, -4.2), (-1.667, 1.4), (-15.639, -1.4), (-11.31, 1.4), (0, -1.4),
    (-0.667, 4.2), (-8.843, -1.4), (-7.254, 1.4), (0.333, -4.2), (-0.333, 1.4), (-6.148, -1.4),
    (-5.333, 4.2), (1.333, -1.4), (0.667, 4.2), (-4, -1.4), (-4.667, 1.4), (1.667, -4.2),
    (1, 1.4), (-3.667, -4.2), (-3.333, 4.2), (3.333, -1.4), (2.333, 1.4), (-2.667, -1.4),
    (-3, 1.4), (7, -1.4), (4.667, 1.4), (-2.333, -4.2), (-2, 4.2), (15, -1.4), (10.333, 1.4),
    (-1.333, -1.4))

#: Every supported model, by name.
MODELS: Dict[str, VelodyneModel] = {m.name: m for m in (
    VelodyneModel(
        "VLP16", "Velodyne VLP-16 / Puck LITE", 16,
        (-15, 1, -13, 3, -11, 5, -9, 7, -7, 9, -5, 11, -3, 13, -1, 15),
        _ZERO16, _ZERO16, 0.002, 0x22, 2, 1, 55.296, _vlp16_slots(), True, True, 754.0),
    VelodyneModel(
        "PUCK_HIRES", "Velodyne Puck Hi-Res (VLP-16 Hi-Res)", 16,
        (-10, 0.667, -8.667, 2, -7.333, 3.333, -6, 4.667, -4.667, 6, -3.333, 7.333, -2, 8.667,
         -0.667, 10),
        _ZERO16, _ZERO16, 0.002, 0x24, 2, 1, 55.296, _vlp16_slots(), True, True, 754.0),
    VelodyneModel(
        "HDL32E", "Velodyne HDL-32E", 32,
        (-30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00,
         -2.67, -22.67, -1.33, -21.33, 0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00,
         5.33, -14.67, 6.67, -13.33, 8.00, -12.00, 9.33, -10.67, 10.67),
        _ZERO32, _ZERO32, 0.002, 0x21, 1, 1, 46.08, tuple(k * 1.152 for k in range(SLOTS)),
        False, True, 1808.0),
    VelodyneModel(
        "VLP32C", "Velodyne VLP-32C (ROSVEL VeloView calibration)", 32,
        tuple(float(e) for e, _ in _VLP32C), tuple(float(o) for _, o in _VLP32C), _ZERO32,
        0.004, 0x28, 1, 1, 55.296, tuple((k // 2) * 2.304 for k in range(SLOTS)), False, True,
        1507.0),
    VelodyneModel(
        "MORAI_64", "MORAI's idealised HDL-64E S3 (64e_s3-xiesc.yaml), vert offsets not applied",
        64,
        (-7, -6.667, 0.333, 0.667, -6.333, -6, -8.333, -8, -5.667, -5.333, -7.667, -7.333, -3,
         -2.667, -5, -4.667, -2.333, -2, -4.333, -4, -1.667, -1.333, -3.667, -3.333, 1, 1.333,
         -1, -0.667, 1.667, 2, -0.333, 0,
         -22.8, -22.3, -11.8, -11.3, -21.8, -21.3, -24.8, -24.3, -20.8, -20.3, -23.8, -23.3,
         -16.8, -16.3, -19.8, -19.3, -15.8, -15.3, -18.8, -18.3, -14.8, -14.3, -17.8, -17.3,
         -10.8, -10.3, -13.8, -13.3, -9.8, -9.3, -12.8, -12.3),
        _ZERO64, _ZERO64, 0.002, None, 1, 2, 57.6,
        tuple(7.2 * (k // 4) + _S3_PATTERN[k % 4] for k in range(SLOTS)), False, False,
        1e6 / (6 * 57.6)),
)}

_ALIASES = {
    "VLP16": "VLP16", "VLP-16": "VLP16", "PUCK": "VLP16", "PUCKLITE": "VLP16",
    "PUCK_HIRES": "PUCK_HIRES", "PUCKHIRES": "PUCK_HIRES", "VLP16_HIRES": "PUCK_HIRES",
    "VLP-16HI-RES": "PUCK_HIRES", "VLP16HIRES": "PUCK_HIRES",
    "HDL32E": "HDL32E", "HDL-32E": "HDL32E", "32E": "HDL32E",
    "VLP32C": "VLP32C", "VLP-32C": "VLP32C", "32C": "VLP32C",
    "MORAI_64": "MORAI_64", "64": "MORAI_64", "64E_S3": "MORAI_64", "HDL64E_S3": "MORAI_64",
    "HDL-64E_S3": "MORAI_64",
}


def get_model(name) -> VelodyneModel:
    """A model by name (``'VLP16'``, ``'VLP-16'``, ``'32E'``, ``'64E_S3'``, ...) or as given."""
    if isinstance(name, VelodyneModel):
        return name
    key = _ALIASES.get(str(name).strip().upper().replace(" ", ""))
    if key is None:
        raise ValueError(f"unknown Velodyne model {name!r}; known: {', '.join(MODELS)}")
    return MODELS[key]


def model_from_product_id(product_id: int) -> Optional[VelodyneModel]:
    """The model whose product-id byte (1205) is ``product_id``, or None."""
    for model in MODELS.values():
        if model.product_id is not None and model.product_id == product_id:
            return model
    return None


_POINT_DTYPE = np.dtype({"names": ["dist", "refl"], "formats": ["<u2", "u1"],
                         "offsets": [0, 2], "itemsize": 3})
_BLOCK_DTYPE = np.dtype({"names": ["flag", "azimuth", "points"],
                         "formats": ["<u2", "<u2", (_POINT_DTYPE, (SLOTS,))],
                         "offsets": [0, 2, 4], "itemsize": 100})
#: numpy view of one packet: ``blocks`` (12) of ``flag``, ``azimuth``,
#: ``points`` (32) of ``dist``, ``refl``; then ``stamp``, ``mode``, ``product``.
PACKET_DTYPE = np.dtype({"names": ["blocks", "stamp", "mode", "product"],
                         "formats": [(_BLOCK_DTYPE, (BLOCKS,)), "<u4", "u1", "u1"],
                         "offsets": [0, 1200, 1204, 1205], "itemsize": PACKET_SIZE})
