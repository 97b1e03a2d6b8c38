"""CommandState (ros/udp_bridge/command_sender.py): the one owner of what travels with the control commands, its
one lock rule, and that nothing else takes its lock."""
import os
import re
import threading

import pytest

import helpers
from morai_bridge.ros.udp_bridge.command_sender import CommandState, State


def test_change_plans_from_the_state_in_force_and_applies_in_one_step():
    s = CommandState(gear=4, ctrl_mode=3, lamps='L0')
    result, changed = s.change(lambda st: (dict(gear=st.gear - 2, lamps='L1'), st.gear))
    assert (result, changed) == (4, True)
    assert s.snapshot() == State(2, 3, 'L1', None)
    assert s.update(lamps='L2') is False                 # lamps alone change neither gear nor mode
    assert s.update(sync_gear=1) is False and s.snapshot().sync_gear == 1
    with pytest.raises(TypeError, match='no field colour'):
        s.update(colour='red')


def test_concurrent_changes_are_never_lost_or_torn():
    s = CommandState(gear=0, ctrl_mode=0, lamps=None)
    seen = []

    def bump():
        for _ in range(2000):
            s.change(lambda st: (dict(gear=st.gear + 1, ctrl_mode=st.ctrl_mode + 1), None))
            st = s.snapshot()
            seen.append(st.gear == st.ctrl_mode)
    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.snapshot()[:2] == (8000, 8000) and all(seen)


def test_nothing_outside_command_sender_takes_the_state_lock_or_writes_its_fields():
    src = os.path.join(helpers.ROOT, 'src', 'morai_bridge')
    offenders = []
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.py') or f == 'command_sender.py':
                continue
            text = open(os.path.join(dirpath, f)).read()
            if re.search(r'state\._lock|state\._state|state\.lock\b', text):
                offenders.append(f)
    assert offenders == []
