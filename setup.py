# Used by catkin_python_setup(); do not call directly.
from setuptools import setup
from catkin_pkg.python_setup import generate_distutils_setup

setup(**generate_distutils_setup(
    packages=[
        'morai_bridge',
        'morai_bridge.wire',
        'morai_bridge.wire.velodyne',
        'morai_bridge.wire.camera',
        'morai_bridge.wire.udp',
        'morai_bridge.wire.erp42',
        'morai_bridge.kinematics',
        'morai_bridge.configuration',
        'morai_bridge.link',
        'morai_bridge.ros',
        'morai_bridge.ros.udp_bridge',
        'morai_bridge.ros.sensors',
        'morai_bridge.ros.markers',
        'morai_bridge.ros.erp42',
        'morai_bridge.ros.recordings',
        'morai_bridge.nodes',
        'morai_bridge.emu',
        'morai_bridge.emu.sim',
        'morai_bridge.emu.pcu',
        'morai_bridge.emu.sensors',
        'morai_bridge.dump',
        'morai_bridge.selftest',
    ],
    package_dir={'': 'src'},
))
