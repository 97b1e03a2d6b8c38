"""A short, deterministic slice of the fuzzing run (fuzz/run.sh runs >= 10^6 inputs
per decoder with atheris): seeded mutations of every test vector through the
same checks (fuzz/targets.py).  Only DecodeError may leave a UDP decoder; the
ERP-42 framers never raise and account for every byte."""
import importlib.util
import os
import random
import struct

import pytest

import helpers

ROOT = helpers.ROOT
_spec = importlib.util.spec_from_file_location('fuzz_targets', os.path.join(ROOT, 'fuzz', 'targets.py'))
targets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(targets)

UDP_SEEDS = [bytes.fromhex(v['hex']) for v in helpers.load_vectors('udp')['vectors']]
_E = helpers.load_vectors('erp42')
ERP_SEEDS = [bytes.fromhex(f['hex']) for f in _E['frames']] + [bytes.fromhex(s['hex']) for s in _E['streams']]


def mutations(seeds, n, seed):
    """Bit flips, byte overwrites, truncations, extensions, splices and random bytes."""
    rng = random.Random(seed)
    for _ in range(n):
        d = bytearray(rng.choice(seeds))
        op = rng.randrange(7)
        if op == 0 and d:
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(d))
                d[i] ^= 1 << rng.randrange(8)
        elif op == 1 and d:
            for _ in range(rng.randint(1, 4)):
                d[rng.randrange(len(d))] = rng.randrange(256)
        elif op == 2:
            d = d[:rng.randrange(len(d) + 1)]
        elif op == 3:
            d += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        elif op == 4:
            other = rng.choice(seeds)
            cut = rng.randrange(len(d) + 1)
            d = d[:cut] + other[rng.randrange(len(other) + 1):]
        elif op == 5:
            d = bytearray(rng.randrange(256) for _ in range(rng.randint(0, 300)))
        else:
            # a plausible header with a wrong data_length
            if len(d) > 20 and d[:1] == b'#':
                h = d.index(b'$') + 1 if b'$' in d[:32] else 0
                if h:
                    d[h:h + 4] = rng.randrange(1 << 32).to_bytes(4, 'little')
        yield bytes(d)


@pytest.mark.parametrize('target', ['udp', 'lockstep'])
def test_udp_decoders_only_raise_decode_error(target):
    check = targets.TARGETS[target]
    outcomes = {}
    for data in mutations(UDP_SEEDS, 20000, seed=2026):
        r = check(data)
        outcomes[r] = outcomes.get(r, 0) + 1
    assert outcomes.get('error', 0) > 1000          # the mutations do produce bad input
    if target == 'udp':
        assert outcomes.get('decoded', 0) > 100      # and some still decode (flips inside payloads)


@pytest.mark.parametrize('target', ['erp42_feedback', 'erp42_command'])
def test_erp42_framers_never_raise_and_account_for_every_byte(target):
    check = targets.TARGETS[target]
    frames = sum(check(d) for d in mutations(ERP_SEEDS, 20000, seed=42))
    assert frames > 0


def test_targets_catch_misbehaviour():
    """The checks can fail: a decoder that raises something else is reported."""
    real = targets.udp.decode
    try:
        targets.udp.decode = lambda data: (_ for _ in ()).throw(IndexError('boom'))
        with pytest.raises(AssertionError, match='IndexError'):
            targets.check_udp(b'#MoraiInfo$')
    finally:
        targets.udp.decode = real


# ----------------------------------------------------------------------------- sensor codecs

SENSOR_SLICE = {'camera': 5000, 'boxes': 5000, 'velodyne': 2000, 'lidar2d': 5000}


@pytest.mark.parametrize('target', sorted(SENSOR_SLICE))
def test_sensor_codecs_only_raise_their_error(target):
    """Seeded mutations of the sensor targets' seeds (fuzz/targets.py SEEDS) through their checks:
    only SensorDecodeError leaves a decoder, the assemblers never raise and stay consistent."""
    check = targets.TARGETS[target]
    seeds = targets.SEEDS[target]()
    outcomes = {}
    for data in mutations(seeds, SENSOR_SLICE[target], seed=23):
        r = check(data)
        outcomes[r] = outcomes.get(r, 0) + 1
    assert len(outcomes) > 1, outcomes           # the mutations reach more than one outcome


def test_sensor_targets_catch_misbehaviour():
    """A sensor decoder raising something else than its typed error is reported."""
    real = targets.camera.decode_boxes
    try:
        targets.camera.decode_boxes = lambda *a, **k: (_ for _ in ()).throw(struct.error('boom'))
        with pytest.raises(AssertionError, match='error: boom'):
            targets.check_boxes(targets.SEEDS['boxes']()[0])
    finally:
        targets.camera.decode_boxes = real
    real = targets.velodyne.RevolutionAssembler.add
    try:
        targets.velodyne.RevolutionAssembler.add = lambda self, d, stamp=None: None     # loses packets
        with pytest.raises(AssertionError, match='valid packets'):
            targets.check_velodyne(targets.SEEDS['velodyne']()[0])
    finally:
        targets.velodyne.RevolutionAssembler.add = real
