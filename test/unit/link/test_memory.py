"""morai_bridge.link.memory: with keep_freed_memory, buffers of megabytes freed and allocated again
cost no page faults (counted by the kernel: getrusage's minor faults); with glibc's defaults the
heap is trimmed when they are all freed, and every page faults again."""
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent('''
    import resource, sys, threading
    from morai_bridge.link.memory import keep_freed_memory
    applied = keep_freed_memory() if sys.argv[1] == 'keep' else None
    faults = []

    def work():                      # like a sensor bridge's receive thread: its own malloc arena
        for i in range(40):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            # a revolution's buffers live at once (points, packed cloud, serialisation buffer), then all go
            bufs = [bytearray(4 << 20) for _ in range(3)]      # zeroed: every page touched
            del bufs
            if i >= 10:              # after warm-up
                faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    print(applied, sum(faults) / len(faults))
''')


def run(mode):
    out = subprocess.run([sys.executable, '-c', CHILD, mode], capture_output=True, text=True, check=True,
                         env={'PYTHONPATH': ':'.join(p for p in sys.path if p), 'PATH': '/usr/bin:/bin'})
    applied, faults = out.stdout.split()
    return applied, float(faults)


def test_freed_buffers_are_reused_without_page_faults():
    if not sys.platform.startswith('linux'):
        pytest.skip('glibc mallopt: Linux only')
    applied, kept = run('keep')
    _, default = run('default')
    assert applied == 'True'
    # 3 x 4 MB is 3072 pages: freed together they exceed glibc's default trim threshold (twice the
    # largest block freed), so they go back to the kernel; kept, the heap serves them again
    assert default > 1000
    assert kept < 20
