"""Fixtures shared by the unit tests."""
import importlib
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'bench')


@pytest.fixture(scope='module')
def check_convert():
    """bench/check_convert.py as a module (the byte-identity checks the unit tests keep)."""
    sys.path.insert(0, BENCH)
    try:
        return importlib.import_module('check_convert')
    finally:
        sys.path.remove(BENCH)
