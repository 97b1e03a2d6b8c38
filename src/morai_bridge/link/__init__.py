"""The link layer: the bytes' way in and out, and the threads that carry them (no ROS).

* :mod:`.transport`: UDP sockets (bind with clear errors, a multi-socket receiver in one
  supervised thread, a sender), per-stream counters.
* :mod:`.serial_port`: the ERP-42 serial link (pyserial), its I/O threads and outage handling.
* :mod:`.workers`: supervised worker threads (restart, backoff, death), throttled logging,
  worker diagnostics.

Used by the ROS layer, the emulators, the dump tool and the self-test; imports only ``wire``.
"""
