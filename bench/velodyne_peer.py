#!/usr/bin/python3
"""Peer side of bench/bench_velodyne.py: decodes the same packets with the
C++-backed ``velodyne_decoder`` package (PyPI ``velodyne-decoder``).

Runs inside the throw-away virtual environment that bench_velodyne.py creates;
of this repository it imports only bench_velodyne.best_of, so that both
decoders are timed the same way, and configuration.params for its command line.

Usage:  python velodyne_peer.py IN_DIR MIN_SECONDS
IN_DIR holds ``<name>.bin`` files (concatenated 1206-byte packets of one
revolution each).  For each, writes ``<name>.peer.npy`` (the decoded points,
velodyne_decoder's contiguous float32 layout: x, y, z, intensity, time,
column, ring, return_type) and prints one JSON line per file with the timings.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
from morai_bridge.configuration.params import Param, parse_args  # noqa: E402

PACKET = 1206
#: the command line (configuration.params)
PARAMS = [Param("in_dir", "", "the folder of <name>.bin files, where the <name>.peer.npy files are written",
                positional=True, metavar="IN_DIR"),
          Param("min_seconds", None, "each timed run lasts about this long [s] (bench_velodyne.best_of)", kind=float,
                positional=True, metavar="MIN_SECONDS")]


def main(argv=None):
    args = parse_args(PARAMS, argv, description=__doc__, raw_help=True)
    in_dir, min_seconds = args.in_dir, args.min_seconds
    # after the command line: --help needs neither the peer's package (only in bench_velodyne's virtual
    # environment) nor numpy
    import numpy as np
    import velodyne_decoder as vd

    from bench_velodyne import best_of   # this script's directory is on sys.path
    version = getattr(vd, "__version__", None)
    try:
        from importlib.metadata import version as dist_version
        version = dist_version("velodyne-decoder")
    except Exception:  # noqa: BLE001 - version is informative only
        pass
    for name in sorted(f[:-4] for f in os.listdir(in_dir) if f.endswith(".bin")):
        raw = open(os.path.join(in_dir, name + ".bin"), "rb").read()
        packets = [raw[i:i + PACKET] for i in range(0, len(raw), PACKET)]
        arrays = [np.frombuffer(p, np.uint8) for p in packets]
        # keep every return: the same range limits as our decoder (none)
        config = vd.Config(min_range=0.0, max_range=1e6)
        vector = vd.PacketVector()
        for i, a in enumerate(arrays):
            vector.append(vd.VelodynePacket(i * 1e-3, a))
        decoder = vd.ScanDecoder(config)
        _stamp, points = decoder.decode(vector)
        np.save(os.path.join(in_dir, name + ".peer.npy"), np.asarray(points, np.float32))

        scan = best_of(lambda: decoder.decode(vector), min_seconds)

        def stream():
            sd = vd.StreamDecoder(config)
            for i, p in enumerate(packets):
                sd.decode(i * 1e-3, p)
            sd.finish()
        streamed = best_of(stream, min_seconds)
        print(json.dumps({"name": name, "packets": len(packets), "points": int(len(points)),
                          "scan_decode_s": scan, "stream_decode_s": streamed,
                          "model": str(decoder.model_id), "version": version}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
