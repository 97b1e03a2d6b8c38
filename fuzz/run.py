#!/usr/bin/python3
"""Coverage-guided fuzzing of the decoders with atheris (run by fuzz/run.sh).

    fuzz/run.sh                 every target, 1,000,000 inputs each
    fuzz/run.sh udp 5000000     one target, more inputs
    fuzz/run.sh "camera boxes velodyne lidar2d"    the sensor codecs

Seeds: every test vector of test/data (UDP datagrams, ERP-42 frames and streams);
for the sensor targets, inputs made with the codecs' encoders (targets.SEEDS).
A finding is written to fuzz/out/crash-* by libFuzzer and the run fails.
"""
import json
import os
import sys
import tempfile

import atheris
import numpy  # noqa: F401  (imported before instrumenting: only our code is instrumented; an
#                           instrumented numpy made the velodyne run's RSS grow ~3 kB per input
#                           until libFuzzer's 2 GB limit, with no growth outside atheris)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
with atheris.instrument_imports():
    import targets  # noqa: E402


def seeds(name):
    if name in targets.SEEDS:
        return targets.SEEDS[name]()
    data = os.path.join(HERE, '..', 'test', 'data')
    out = []
    if name in ('udp', 'lockstep'):
        for v in json.load(open(os.path.join(data, 'udp_vectors.json')))['vectors']:
            out.append(bytes.fromhex(v['hex']))
    else:
        d = json.load(open(os.path.join(data, 'erp42_vectors.json')))
        for f in d['frames']:
            out.append(bytes.fromhex(f['hex']))
        for s in d['streams']:
            out.append(bytes.fromhex(s['hex']))
    return out


def main():
    name = sys.argv[1]
    runs = int(sys.argv[2])
    target = targets.TARGETS[name]
    corpus = tempfile.mkdtemp(prefix=f'fuzz-{name}-')
    for i, s in enumerate(seeds(name)):
        with open(os.path.join(corpus, 'seed%03d' % i), 'wb') as f:
            f.write(s)
    out = os.path.join(HERE, 'out')
    os.makedirs(out, exist_ok=True)
    max_len = targets.MAX_LEN.get(name, 4096)
    # extra arguments: corpus directories of earlier runs to start from (e.g. to continue a run)
    # -rss_limit_mb: the velodyne target's process grows ~2-3 kB per input under atheris (not
    # outside it: docs/reliability.md), which reached libFuzzer's default 2 GB after 651,492 inputs
    atheris.Setup([sys.argv[0], '-runs=%d' % runs, '-max_len=%d' % max_len, '-print_final_stats=1',
                   '-rss_limit_mb=6144', f'-artifact_prefix={out}/crash-{name}-', corpus]
                  + sys.argv[3:], lambda data: target(bytes(data)))
    atheris.Fuzz()


if __name__ == '__main__':
    main()
