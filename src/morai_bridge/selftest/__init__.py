"""morai_check_signs: the sign self-test (measures the simulator's wire steering signs by driving).

* :mod:`.signs` - the measurement logic: status samples -> :class:`~.signs.Verdict` (pure);
* :mod:`.check_options` - the options, declared once: the Param table and the Options of a run;
* :mod:`.check_link` - the UDP link to the simulator: status sockets, commands, the stop;
* :mod:`.check_signs` - the run against a live simulator (:class:`~.check_signs.SignCheck`);
* :mod:`.check_report` - what a run prints and writes (signs, full-scale angle, profiles);
* :mod:`.check_signs_cli` - the command line: ``main(argv=None) -> int``.

Wire, configuration and transport only, no ROS (test/unit/project/test_layering.py).  Guide: docs/check_signs.md.
"""
