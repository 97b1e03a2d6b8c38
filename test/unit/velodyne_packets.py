"""Velodyne packets for the unit tests, built with struct from the layout in shared/spec/sensors.md
section 3 (not with the codec's encoder)."""
import struct


def vlp16_packet(azimuths, dist_counts, refl, stamp_us=0):
    """One VLP-16 packet with struct: 12 blocks (FF EE, azimuth), 32 x (distance, intensity)."""
    out = b''
    for b in range(12):
        out += struct.pack('<HH', 0xEEFF, azimuths[b])
        for k in range(32):
            out += struct.pack('<HB', dist_counts[b][k], refl[b][k])
    return out + struct.pack('<IBB', stamp_us, 0x37, 0x22)
