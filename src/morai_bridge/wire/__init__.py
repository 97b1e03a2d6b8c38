"""Pure codecs: bytes <-> plain typed objects.  No ROS imports here.

``udp/`` the MORAI UDP protocol and its streams, ``erp42/`` the ERP-42 serial protocol, ``camera/``,
``velodyne/`` and ``lidar2d`` the sensor codecs (``sensor_errors`` their error), and what several of
them share: ``enums``, ``units``, ``capture`` (UDP datagrams out of pcap / pcapng files).
"""
