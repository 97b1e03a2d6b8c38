"""Emulators of the far ends (MORAI simulator over UDP, ERP-42 PCU on a pty).

Pure Python: the ROS node wrappers live in ``morai_bridge.nodes``.
"""
