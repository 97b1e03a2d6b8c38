"""Velodyne packet encoder: rays and ranges -> 1206-byte data packets (no ROS).

Part of :mod:`morai_bridge.wire.velodyne` (whose package exports the public names).  Used by the
simulator emulator's ray-casting LiDAR and by the tests.
"""
from typing import List, Optional, Tuple

import numpy as np

from ..sensor_errors import EncodeError
from .models import (BLOCKS, HOUR_US, LOWER_BANK, PACKET_SIZE, RETURN_DUAL, RETURN_STRONGEST, SLOTS,
                     UPPER_BANK, PACKET_DTYPE, AZ_MAX, get_model)

def _as_array(name: str, value, shape: Tuple[int, ...], dtype) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=dtype)
        return np.broadcast_to(arr, shape)
    except (TypeError, ValueError) as exc:
        raise EncodeError(f"{name}: cannot be read as {np.dtype(dtype)} of shape {shape} ({exc})", field=name) from None


def encode_packets(model, azimuths_deg, distances_m, intensities=None, timestamps_us=None,
                   return_mode: int = RETURN_STRONGEST, product_id: Optional[int] = None,
                   flags=None) -> List[bytes]:
    """Build 1206-byte packets.

    azimuths_deg: (P, 12) block azimuths, deg (rounded to 0.01 deg, taken mod 360).
    distances_m: (P, 12, 32) per block slot, m; NaN, inf or <= 0 = no return (0);
    a distance above 65535 counts raises :class:`EncodeError`.
    intensities: (P, 12, 32) 0..255 (default 0).  timestamps_us: (P,) us past the
    hour (default 0; taken mod one hour).  return_mode: byte 1204.  product_id:
    byte 1205 (default the model's, 0 if it has none).  flags: (P, 12) uint16
    block flags (default FF EE, alternating with FF DD for the 64-laser model).
    """
    m = get_model(model)
    dist = np.asarray(distances_m, np.float64)
    if dist.ndim != 3 or dist.shape[1:] != (BLOCKS, SLOTS):
        raise EncodeError(f"distances_m must have shape (P, 12, 32), got {dist.shape}",
                          field="distances_m")
    p = dist.shape[0]
    az = _as_array("azimuths_deg", azimuths_deg, (p, BLOCKS), np.float64)
    if not np.all(np.isfinite(az)):
        raise EncodeError("azimuths must be finite", field="azimuths_deg")
    inten = _as_array("intensities", 0 if intensities is None else intensities,
                      (p, BLOCKS, SLOTS), np.float64)
    if np.any((inten < 0) | (inten > 255)) or not np.all(np.isfinite(inten)):
        raise EncodeError("intensities must be 0..255", field="intensities")
    stamps = _as_array("timestamps_us", 0 if timestamps_us is None else timestamps_us, (p,),
                       np.int64)
    for name, value in (("return_mode", return_mode), ("product_id", product_id)):
        if value is not None and not (isinstance(value, (int, np.integer)) and 0 <= value <= 255):
            raise EncodeError(f"{name} must be a byte, got {value!r}", field=name)
    if flags is None:
        flags = np.full((p, BLOCKS), UPPER_BANK, np.uint16)
        if m.blocks_per_firing == 2:
            flags[:, 1::2] = LOWER_BANK
    else:
        flags = _as_array("flags", flags, (p, BLOCKS), np.uint16)

    with np.errstate(invalid="ignore"):
        counts = np.rint(dist / m.distance_resolution_m)
        counts[~np.isfinite(counts) | (counts < 0)] = 0
    if np.any(counts > 0xFFFF):
        raise EncodeError("distance %.3f m exceeds the %s maximum of %.3f m"
                          % (float(np.nanmax(np.where(np.isfinite(dist), dist, 0))), m.name,
                             0xFFFF * m.distance_resolution_m), field="distances_m")
    rec = np.zeros(p, PACKET_DTYPE)
    blocks = rec["blocks"]
    blocks["flag"] = flags
    blocks["azimuth"] = np.rint(az * 100.0).astype(np.int64) % AZ_MAX
    blocks["points"]["dist"] = counts.astype(np.uint16)
    blocks["points"]["refl"] = np.rint(inten).astype(np.uint8)
    rec["stamp"] = (stamps % HOUR_US).astype(np.uint32)
    rec["mode"] = return_mode
    rec["product"] = (m.product_id or 0) if product_id is None else product_id
    raw = rec.tobytes()
    return [raw[i * PACKET_SIZE:(i + 1) * PACKET_SIZE] for i in range(p)]


def firing_step_deg(model, rpm: float = 600.0) -> float:
    """Azimuth advance between consecutive firings (columns), deg."""
    m = get_model(model)
    return float(rpm) * 6.0 * m.firing_period_us * 1e-6


def scan_pattern(model, rpm: float = 600.0, start_azimuth_deg: float = 0.0,
                 columns: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Ray directions of one revolution, for a ray-casting emulator.

    Returns ``(azimuth_deg, elevation_deg)``: azimuth_deg (C, L) float64 in
    [0, 360), the azimuth the decoder assigns to laser l of column c (with the
    default ``interpolation='velodyne'`` and constant rotation); elevation_deg (L,).
    C defaults to the columns of one revolution at ``rpm``.  Feed the ranges
    measured along these rays, shaped (C, L), to :func:`packets_from_ranges`
    with the same ``rpm`` and ``start_azimuth_deg``.
    """
    m = get_model(model)
    step = firing_step_deg(m, rpm)
    if columns is None:
        columns = int(round(360.0 / step))
    col = float(start_azimuth_deg) + step * np.arange(columns)
    shift = np.asarray(m.azimuth_offsets_deg, np.float64)
    if m.interpolate:
        lasers_per_firing = SLOTS // m.firings_per_block
        shift = shift + step * np.asarray(m.slot_times_us[:lasers_per_firing]) / m.firing_period_us
    return (col[:, None] + shift[None, :]) % 360.0, np.asarray(m.elevations_deg, np.float64)


def packets_from_ranges(model, ranges_m, intensities=None, rpm: float = 600.0,
                        start_azimuth_deg: float = 0.0, start_time_us: int = 0,
                        last_ranges_m=None, last_intensities=None,
                        return_mode: int = RETURN_STRONGEST) -> List[bytes]:
    """Packets for per-laser ranges of consecutive firings.

    ranges_m: (C, L) m, column c fired at ``start_azimuth_deg + c * firing_step``,
    laser l in laser-number order; NaN / inf / <= 0 = no return.  intensities:
    (C, L) 0..255.  The last packet is filled with no-return columns.  Device
    timestamps start at ``start_time_us`` and advance by the packet period.
    With ``last_ranges_m`` (and ``last_intensities``) the packets are dual return:
    blocks 2j carry the last returns, 2j+1 the strongest (``ranges_m``), byte 1204
    = 0x39.  Otherwise byte 1204 = ``return_mode``.
    """
    m = get_model(model)
    dual = last_ranges_m is not None
    if dual and not m.dual_supported:
        raise EncodeError(f"dual return is not supported for {m.name}", field="last_ranges_m")
    ranges = np.asarray(ranges_m, np.float64)
    if ranges.ndim != 2 or ranges.shape[1] != m.lasers:
        raise EncodeError("ranges_m must have shape (C, %d), got %s" % (m.lasers, ranges.shape),
                          field="ranges_m")
    c = ranges.shape[0]
    inten = _as_array("intensities", 0 if intensities is None else intensities, ranges.shape,
                      np.float64)
    cpp = m.columns_per_packet(dual)
    p = max(1, -(-c // cpp))
    total = p * cpp

    def padded(arr, fill):
        out = np.full((total, m.lasers), fill)
        out[:c] = arr
        return out

    if dual:
        last = np.asarray(last_ranges_m, np.float64)
        if last.shape != ranges.shape:
            raise EncodeError("last_ranges_m must have the shape of ranges_m",
                              field="last_ranges_m")
        last_inten = _as_array("last_intensities",
                               0 if last_intensities is None else last_intensities,
                               ranges.shape, np.float64)
    step = firing_step_deg(m, rpm)
    col_az = float(start_azimuth_deg) + step * np.arange(total)
    # columns -> blocks: 2 firings per VLP-16 block, 2 blocks per HDL-64 firing
    per_block = (-1, SLOTS)
    r_blocks = padded(ranges, np.inf).reshape(per_block)
    i_blocks = padded(inten, 0.0).reshape(per_block)
    block_az = col_az[::m.firings_per_block] if m.firings_per_block > 1 else np.repeat(
        col_az, m.blocks_per_firing)
    if dual:
        r_last = padded(last, np.inf).reshape(per_block)
        i_last = padded(last_inten, 0.0).reshape(per_block)
        r_blocks = np.stack([r_last, r_blocks], axis=1).reshape(per_block)
        i_blocks = np.stack([i_last, i_blocks], axis=1).reshape(per_block)
        block_az = np.repeat(block_az, 2)
    stamps = int(start_time_us) + np.rint(np.arange(p) * m.packet_period_us(dual)).astype(np.int64)
    return encode_packets(m, block_az.reshape(p, BLOCKS), r_blocks.reshape(p, BLOCKS, SLOTS),
                          i_blocks.reshape(p, BLOCKS, SLOTS), stamps,
                          RETURN_DUAL if dual else return_mode)
