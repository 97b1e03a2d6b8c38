"""morai_check_signs: the sign self-test (measures the simulator's wire steering signs by driving).

* :mod:`.signs` - the measurement logic: status samples -> :class:`~.signs.Verdict` (pure);
* :mod:`.check_signs` - the run against a live simulator over UDP and ``main(argv=None) -> int``.

Wire, configuration and transport only, no ROS (test/unit/project/test_layering.py).  Guide: docs/check_signs.md.
"""
