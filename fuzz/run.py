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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'src'))
from morai_bridge.configuration.params import REST, Param, command_line  # noqa: E402

#: the command line (configuration.params)
PARAMS = [Param('target', '', 'the decoder to fuzz, a name of targets.TARGETS (udp, lockstep, erp42_feedback, '
                'erp42_command, camera, boxes, velodyne, lidar2d)', positional=True, metavar='TARGET'),
          Param('runs', None, 'how many inputs (libFuzzer -runs)', kind=int, positional=True, metavar='RUNS'),
          Param('more', [], "passed on to libFuzzer: corpus directories of earlier runs to start from, libFuzzer's "
                'own -flag=value options', positional=True, nargs=REST, metavar='CORPUS')]


def instrumented_targets():
    """atheris, and fuzz/targets.py imported under its instrumentation.  Called once the command line is
    read: --help needs neither atheris (fuzz/run.sh's virtual environment has it) nor numpy."""
    import atheris
    import numpy  # noqa: F401  (imported before instrumenting: only our code is instrumented; an
    #                           instrumented numpy made the velodyne run's RSS grow ~3 kB per input
    #                           until libFuzzer's 2 GB limit, with no growth outside atheris)
    with atheris.instrument_imports():
        import targets
    return atheris, targets


def seeds(targets, name):
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


def main(argv=None):
    ap = command_line(PARAMS, description=__doc__, raw_help=True)
    args = ap.parse_args(argv)
    name, runs = args.target, args.runs
    atheris, targets = instrumented_targets()
    if name not in targets.TARGETS:
        ap.error(f"no target {name} (known: {', '.join(targets.TARGETS)})")
    target = targets.TARGETS[name]
    corpus = tempfile.mkdtemp(prefix=f'fuzz-{name}-')
    for i, s in enumerate(seeds(targets, name)):
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
                  + args.more, lambda data: target(bytes(data)))
    atheris.Fuzz()


if __name__ == '__main__':
    main()
