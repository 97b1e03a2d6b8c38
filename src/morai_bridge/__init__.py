"""MORAI simulator / ERP-42 bridge library.

Layers call downward only: ``nodes`` -> ``ros`` -> ``wire``.  ``wire`` and
``emu`` never import ROS modules, so they are usable and testable anywhere.
"""
