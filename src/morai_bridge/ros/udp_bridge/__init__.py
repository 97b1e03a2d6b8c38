"""The UDP bridge (nodes/udp_bridge.py; capture_replay reuses its receive side): simulator datagrams
-> morai_msgs topics, command topics -> datagrams, the simulator's services.

``sim_receive``     the receive sockets and dispatch: decode, stamp, convert, publish
``sim_to_ros``      one converter per received stream (units, signs, empty slots)
``command_sender``  the command subscribers, the control state, the send and the watchdog
``ros_to_sim``      one converter per command stream, and the simulator-control packets
``sim_services``    /Morai_SimProc, /Service_MoraiSL, /Service_MoraiEventCmd
``sync_services``   the synchronous-mode services over the emulator's lock-step extension
``info_services``   the information services UDP can answer (traffic lights, vehicle and map specs)
``diagnostics``     /diagnostics of the bridge: per stream, commands, the control state
"""
