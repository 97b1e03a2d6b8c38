"""Small helpers shared by the unit tests (pytest puts test/unit on sys.path)."""
import threading
import time


def wait_for(pred, timeout=3.0, step=0.005):
    """True as soon as pred() is; after ``timeout`` seconds, pred()'s last answer."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


class Log(object):
    """A log callable that keeps the lines it was given."""

    def __init__(self):
        self.lines = []
        self.lock = threading.Lock()

    def __call__(self, text):
        with self.lock:
            self.lines.append(text)
