"""The sensor bridges (nodes/camera_bridge.py, lidar_bridge.py, lidar2d_bridge.py): a sensor's UDP
port -> sensor_msgs.

``sensor_bridge``  :class:`SensorBridge`, the base of the three (socket, workers, TF, stamps,
                   diagnostics), and their node main :func:`run_node`
``sensor_params``  the parameter groups every sensor bridge declares, MORAI SIM's saved settings
``camera_ros``     the camera: JPEG frames -> CompressedImage, CameraInfo (and Image), its boxes
``box_markers``    the camera's boxes -> MarkerArray, and drawn on the annotated image
``lidar_ros``      the 3D LiDAR: revolutions -> PointCloud2
``lidar2d_ros``    the 2D LiDAR: scans -> LaserScan
"""
