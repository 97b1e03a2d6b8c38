"""Vehicle motion computed from what the vehicle reports (no ROS).

* :mod:`.dead_reckoning`: the bicycle-model integrator of the ERP-42 driver's wheel odometry.

Imports only ``wire`` (its unit helpers).
"""
