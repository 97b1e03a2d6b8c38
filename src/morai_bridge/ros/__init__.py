"""Conversions between wire objects and morai_msgs / standard ROS messages."""
