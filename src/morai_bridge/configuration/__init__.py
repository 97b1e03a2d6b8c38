"""Configuration declared as data, and its files read and checked (no ROS).

* :mod:`.params`: :class:`~.params.Param` tables (name, default, doc, choices, range), their
  checks, and the named values that mean "disabled", "the version's", "any free port";
* :mod:`.sim_versions`: the simulator version profiles (``config/sim_versions/``);
* :mod:`.vehicle_profiles`: the vehicle profiles (``config/vehicles/``);
* :mod:`.sim_settings_files`: MORAI SIM's saved sensor / network settings (JSON) read and checked;
  :mod:`.settings_plan`: the bridge nodes and parameters they call for.

Reading the tables from ROS is :mod:`morai_bridge.ros.params`.  Imports only ``wire``.
"""
