"""The markers node (nodes/markers.py): the simulator's ground truth as RViz markers.

``shapes``     morai_msgs ground truth -> visualization_msgs/Marker, as pure functions
``publisher``  the node's working part: keeps the latest ground truth, publishes the MarkerArray
"""
