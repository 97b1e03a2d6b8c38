"""The capture reader with whatever dpkt is installed, and without dpkt.

The py38 layer runs this file with Ubuntu 20.04's dpkt 1.9.2, the unit layer with Debian 12's
1.9.8: the real capture must give the same datagrams with both (with 1.9.2 the reader once
multiplied a fragment offset that dpkt had already converted to bytes, and lost every
fragmented Object Info).
"""
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import dpkt
import pytest

import helpers
from morai_bridge.wire import udp
from morai_bridge.wire.capture import read_capture

SRC = Path(helpers.ROOT) / "src"
CAPTURES = Path(helpers.ROOT).parent / "shared" / "captures"


@pytest.mark.skipif(not (CAPTURES / "MORAI.pcap").is_file(),
                    reason=f"real captures not available (expected in {CAPTURES})")
def test_morai_pcap_gives_every_datagram_with_this_dpkt():
    reader = read_capture(CAPTURES / "MORAI.pcap")
    kinds = Counter(type(udp.decode(p)).__name__ for *_, p in reader if p[:1] in (b"#", b"$"))
    where = f"dpkt {dpkt.__version__} on Python {sys.version.split()[0]}"
    assert kinds == {"EgoVehicleStatus": 115, "ObjectInfo": 115, "GetTrafficLightStatus": 115,
                     "CollisionData": 115, "GetIntersectionStatus": 115, "NmeaSentence": 22}, where
    assert (reader.counts["fragments"], reader.counts["reassembled"]) == (230, 115), where
    assert reader.counts["fragments_dropped"] == 0 and reader.counts["undecodable"] == 0, where


def test_without_dpkt_opening_a_capture_says_how_to_install_it(tmp_path):
    """A Python without site-packages (-S) has no dpkt: the package imports, the capture does
    not open, and the error names the install commands (CaptureDependencyError, a CaptureError,
    which the dump tool and capture_replay report as any unreadable capture)."""
    path = tmp_path / "x.pcap"
    path.write_bytes(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "try:\n    import dpkt\nexcept ImportError:\n    pass\nelse:\n    sys.exit(3)\n"
        "from morai_bridge.wire import capture\n"
        "try:\n    capture.read_capture(%r)\n"
        "except capture.CaptureError as e:\n"
        "    print(type(e).__name__, isinstance(e, ValueError)); print(e)\n"
    ) % (str(SRC), str(path))
    out = subprocess.run([sys.executable, "-S", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=dict(os.environ, PYTHONPATH=""))
    if out.returncode == 3:
        pytest.skip("dpkt importable without site-packages here")
    assert out.returncode == 0, out.stdout
    first, message = out.stdout.split("\n", 1)
    assert first == "CaptureDependencyError True"
    assert "sudo apt-get install python3-dpkt" in message and "pip install --user dpkt" in message
