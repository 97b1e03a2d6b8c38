"""Recorded traffic: captures played through the bridge, and bags checked and migrated.

``capture_player``  capture_replay's player: a pcap / pcapng through the UDP bridge's receive side, /clock
``bag_check``       morai_bag_check: per topic and publisher of a bag, messages, rate, gaps, first message
``bag_fix``         morai_bag_fix: a bag of one morai_msgs message set, migrated to the built set
"""
