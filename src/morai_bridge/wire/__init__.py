"""Pure codecs: bytes <-> plain typed objects.  No ROS imports here."""
