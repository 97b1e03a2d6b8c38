"""The public MORAI SIM settings files the settings tests read (test/data/morai_settings/, whose README
names their repositories and commits), shared by configuration/ and nodes/test_morai_settings.py."""
import json
import os

from helpers import ROOT

DATA = os.path.join(ROOT, 'test', 'data', 'morai_settings')
HEVEN = os.path.join(DATA, 'heven_SensorInfo_2023_Hyundai_Ioniq5.json')
HEVEN_NET = os.path.join(DATA, 'heven_NetworkInfo_2023_Hyundai_Ioniq5.template.json')
BAQU4 = os.path.join(DATA, 'baqu4_morai_sensor.json')
BAQU4_NET = os.path.join(DATA, 'baqu4_morai_network.json')


def doc(path):
    """A settings file as JSON."""
    with open(path) as f:
        return json.load(f)
