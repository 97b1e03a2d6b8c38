"""The PCU emulator's end of the serial line: a new pty pair, or an existing serial port.

Both links have the same small interface, used only by the emulator's loop
thread: ``device`` (the path a client opens), ``fileno()`` (for select),
``read()`` (what is there, b"" when nothing), ``write(data)`` (bytes written,
0 when the buffer is full) and ``close()``.  No ROS.
"""

import fcntl
import os
import tty

__all__ = ["PtyLink", "SerialLink", "open_link"]


class PtyLink:
    """A fresh pseudo-terminal pair; we drive the master, clients open the slave path."""

    def __init__(self):
        master, slave = os.openpty()
        try:
            tty.setraw(master)
            tty.setraw(slave)
            flags = fcntl.fcntl(master, fcntl.F_GETFL)
            fcntl.fcntl(master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            self.device = os.ttyname(slave)
        except Exception:
            os.close(master)
            os.close(slave)
            raise
        # Keeping our own slave fd open means reads on the master never see EIO
        # while no client has the port open.
        self._master, self._slave = master, slave

    def fileno(self) -> int:
        return self._master

    def read(self) -> bytes:
        try:
            return os.read(self._master, 4096)
        except BlockingIOError:
            return b""

    def write(self, data: bytes) -> int:
        """Write what fits; 0 when the buffer is full (nobody reading the slave)."""
        try:
            return os.write(self._master, data)
        except BlockingIOError:
            return 0

    def close(self) -> None:
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


class SerialLink:
    """An existing serial device opened with pyserial (e.g. one end of a null-modem cable)."""

    def __init__(self, port: str, baudrate: int):
        import serial  # local import: only needed for real ports

        self._ser = serial.Serial(port, baudrate, bytesize=8, parity="N", stopbits=1,
                                  timeout=0, write_timeout=0.05, xonxoff=False, rtscts=False,
                                  dsrdtr=False, exclusive=True)
        self._timeout_error = serial.SerialTimeoutException
        self.device = port

    def fileno(self) -> int:
        return self._ser.fileno()

    def read(self) -> bytes:
        return self._ser.read(self._ser.in_waiting or 1)

    def write(self, data: bytes) -> int:
        try:
            return self._ser.write(data) or 0
        except self._timeout_error:
            return 0

    def close(self) -> None:
        self._ser.close()


def open_link(port, baudrate: int):
    """``SerialLink(port)`` when a port is given, else a new ``PtyLink``."""
    return SerialLink(port, baudrate) if port else PtyLink()
