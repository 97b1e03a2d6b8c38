"""Emulators of the far ends, one sub-package per product: the MORAI simulator over UDP
(:mod:`.sim`, its sensor streams in :mod:`.sensors`) and the ERP-42 PCU on a pty (:mod:`.pcu`).

Pure Python: the ROS node wrappers live in ``morai_bridge.nodes``.
"""
