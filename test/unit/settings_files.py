"""The public MORAI SIM settings files the settings tests read (test/data/morai_settings/, whose README
names their repositories and commits), shared by configuration/ and nodes/test_morai_settings.py."""
import copy
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


def write(tmp_path, d, name='s.json'):
    """``d`` (a JSON document, or text as it is) written to ``tmp_path/name``; its path."""
    p = tmp_path / name
    p.write_text(d if isinstance(d, str) else json.dumps(d))
    return str(p)


def edited(path, edit):
    """A copy of the settings file at ``path`` with ``edit(document)`` applied."""
    d = copy.deepcopy(doc(path))
    edit(d)
    return d


def net_entries(d):
    """The stream entries of a network settings document (its first ego)."""
    return d['egoNetworkData'][0]['listEgoNetworkInfo']


def with_destination(path, ip, streams=None):
    """The network file with destinationIP ``ip`` on every entry (or the PUBSUB_TYPEs ``streams``)."""
    def edit(d):
        for e in net_entries(d):
            if streams is None or e['PUBSUB_TYPE'] in streams:
                e['config']['udpConfig']['destinationIP'] = ip
    return edited(path, edit)
