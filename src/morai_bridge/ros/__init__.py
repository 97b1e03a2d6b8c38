"""Everything that touches rospy: wire objects <-> morai_msgs / standard ROS messages, by product.

``udp_bridge/``  the UDP bridge            ``sensors/``     the camera and LiDAR bridges
``markers/``     the markers node          ``erp42/``       the ERP-42 serial node
``recordings/``  capture replay, bag tools

and what they share here: ``params`` (~parameters from the parameter server), ``supervision`` (worker
threads on /diagnostics, RosTimer, the diagnostics updater), ``msg_set`` (the built morai_msgs set),
``package_config`` (vehicle profiles and simulator versions from the package's config).
"""
