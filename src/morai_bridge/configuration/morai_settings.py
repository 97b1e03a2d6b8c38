"""The names of :mod:`.sim_settings_files` (MORAI SIM's saved settings files read and checked) and
:mod:`.settings_plan` (the bridge nodes they call for), under the module's former name.

Kept until its last importers (nodes/udp_bridge.py, nodes/morai_settings.py, dump/field_report.py,
ros/sensor_params.py and their tests) import the two modules; then it goes, and with it the second
``morai_settings.py`` of src/morai_bridge (docs/architecture.md, "Modules of one name").  Nothing is
defined here.
"""
from morai_bridge.configuration.settings_plan import *  # noqa: F401,F403
from morai_bridge.configuration.settings_plan import __all__ as _PLAN
from morai_bridge.configuration.sim_settings_files import *  # noqa: F401,F403
from morai_bridge.configuration.sim_settings_files import __all__ as _FILES

__all__ = list(_FILES) + list(_PLAN)
