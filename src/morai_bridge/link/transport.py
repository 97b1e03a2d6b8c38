"""UDP transport shared by the bridge and the simulator emulator (no ROS).

* :func:`resolve_host` turns a host parameter into an IPv4 address, with an
  error that names the parameter when it cannot be resolved.
* :func:`bind_udp` binds one receive socket, with an error that names the
  parameter when the port is taken.
* :class:`StreamStats` counts what one stream received, dropped and why.
* :class:`UdpReceiver` waits on many sockets in one supervised worker thread
  (:class:`morai_bridge.link.workers.Worker`) and hands each datagram to a
  callback, after dropping datagrams from unexpected senders.  An exception
  raised by the callback is counted per stream (``handler_errors``) and
  logged, throttled, with its traceback; the receiver keeps going.
* :class:`ReceivePort`: one such port configured from a node's parameters
  (``~sim_ip``, ``~bind_ip``, ``~port``, ``~socket_buffer``), its receive buffer
  grown as far as the kernel allows (:func:`grow_receive_buffer`).
"""
import errno
import os
import selectors
import socket
import time
import traceback

from morai_bridge.link.workers import ThrottledLog, Worker

MAX_DATAGRAM = 65535


class TransportError(RuntimeError):
    """A configuration problem with a socket: the message says which parameter."""


def resolve_host(host, param):
    """Return the IPv4 address of ``host``; '' and '0.0.0.0' stay as they are."""
    if host in ('', '0.0.0.0'):
        return host
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_DGRAM)
    except (socket.gaierror, UnicodeError) as e:
        raise TransportError(f'cannot resolve {param}={host!r}: {e}') from None
    return infos[0][4][0]


def is_local_address(ip):
    """False when ``ip`` is not an address of this machine (binding it fails: EADDRNOTAVAIL); '' and
    '0.0.0.0' (every address) are local.  A name that does not resolve is not local."""
    if ip in ('', '0.0.0.0'):
        return True
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind((ip, 0))
        return True
    except socket.gaierror:
        return False
    except OSError as e:
        return e.errno != errno.EADDRNOTAVAIL
    finally:
        s.close()


def check_local_address(ip, param, origin):
    """Raise :class:`TransportError` when ``ip`` (the value of ``param``, read from ``origin``: a
    settings file and key) is not an address of this machine, saying what to do."""
    if not is_local_address(ip):
        raise TransportError('%s=%s (from %s) is not an address of this machine: the simulator sends there, so '
                             'run this node on the machine that has that address, or set %s (0.0.0.0: every '
                             'address of this machine)' % (param, ip, origin, param))


#: ports from which Linux lets every user bind, unless lowered (net.ipv4.ip_unprivileged_port_start)
UNPRIVILEGED_PORT_START = 1024
#: what the demo, and a simulator whose status ports were moved, add to a port below 1024 (909 ->
#: 1909, 911 -> 1911: the move eriverOoO/heven-ad-2026 docs/morai/network-persistence.md made)
PRIVILEGED_PORT_OFFSET = 1000
SYSCTL_FILE = '/etc/sysctl.d/60-morai-udp-ports.conf'


def unprivileged_port_start():
    """This machine's net.ipv4.ip_unprivileged_port_start (1024 where it cannot be read)."""
    try:
        with open('/proc/sys/net/ipv4/ip_unprivileged_port_start') as f:
            return int(f.read())
    except (OSError, ValueError):
        return UNPRIVILEGED_PORT_START


def privileged(port):
    """True for a port a stock Linux lets only root bind (1..1023; 0 is "any" or "disabled")."""
    return 0 < int(port) < UNPRIVILEGED_PORT_START


def shift_privileged(port, offset):
    """``port`` + ``offset`` for a :func:`privileged` port, else ``port``.  The bridge and the
    emulator both apply it with the same ``privileged_port_offset``, so the demo's two ends cannot
    disagree."""
    port = int(port)
    return port + int(offset) if offset and privileged(port) else port


def privileged_port_advice(port, param):
    """The text for "Permission denied" on a :func:`privileged` ``port`` set by ``param``
    ('~ego_status_port' for a ROS parameter, whose roslaunch argument drops the '~'; '--status-port'
    for a command-line option): the two ways out, and the one that looks like a way out but is not.
    The sysctl it proposes starts at MORAI's status port (909) at the highest, so that one setting
    covers every version's status ports."""
    from morai_bridge.wire.udp.streams import BY_NAME     # only on this error path: the codec is heavy to import
    new = port + PRIVILEGED_PORT_OFFSET
    option = ('%s %d' if param.startswith('-') else '%s:=%d') % (param.lstrip('~'), new)
    start = min(port, BY_NAME['ego_status'].port)
    return ('only root may bind UDP port %d on this machine (net.ipv4.ip_unprivileged_port_start = %d). Either '
            'move the port: in MORAI SIM\'s network settings set this stream\'s destination port to %d and pass '
            '%s; or let every user bind it: sudo sysctl -w net.ipv4.ip_unprivileged_port_start=%d, kept across '
            'reboots by: echo net.ipv4.ip_unprivileged_port_start=%d | sudo tee %s. Do not setcap '
            'cap_net_bind_service on python3: every Python program gets the right, and the loader then ignores '
            'LD_LIBRARY_PATH, so ROS\'s libraries stop loading (docs/ros_api.md, "Ports below 1024")'
            % (port, unprivileged_port_start(), new, option, start, start, SYSCTL_FILE))


def bind_udp(ip, port, param, rcvbuf=1 << 20, ip_param='~bind_ip'):
    """Bind a UDP socket to (ip, port); ``param`` and ``ip_param`` name the port and address
    parameters (or options) in errors."""
    if not 0 <= int(port) <= 65535:
        raise TransportError(f'{param}={port!r} is not a UDP port (0..65535)')
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.bind((ip, int(port)))
    except OSError as e:
        s.close()
        if e.errno == errno.EADDRINUSE:
            raise TransportError('%s=%d: UDP port %s:%d is already in use (another bridge, emulator or '
                                 'simulator receiver?); choose another port' % (param, port, ip, port)) from None
        if e.errno == errno.EACCES and privileged(port):
            raise TransportError('%s=%d: %s' % (param, port, privileged_port_advice(port, param))) from None
        if e.errno == errno.EADDRNOTAVAIL:
            raise TransportError(f'{param}: address {ip} is not on this machine (check {ip_param})') from None
        raise TransportError('%s: cannot bind %s:%d: %s' % (param, ip, port, e.strerror)) from None
    s.setblocking(False)
    return s


class StreamStats:
    """Counters of one receive stream.  Plain ints: updated by one thread.  The attributes are what
    every stream has; ``counts`` holds the counters of the stream's own meaning, named by whoever
    declares the stream (the UDP bridge: ``wire.streams.Stream.counters``), each starting at 0."""

    __slots__ = ('name', 'received', 'bytes', 'peak_backlog', 'published', 'decode_errors', 'wrong_type', 'foreign',
                 'handler_errors', 'last_rx', 'last_error', 'last_foreign', 'data_length_mismatch',
                 'last_mismatch', 'counts')

    def __init__(self, name, counts=()):
        self.name = name
        self.received = 0        # datagrams from the expected sender
        self.bytes = 0           # their payload bytes
        self.peak_backlog = 0    # the most payload bytes read in one go, before the socket was empty again
        self.published = 0       # turned into a ROS message
        self.decode_errors = 0   # malformed datagrams
        self.wrong_type = 0      # well-formed but not the message this port carries
        self.foreign = 0         # from a host other than the simulator
        self.handler_errors = 0  # datagrams whose handler raised (a bug: logged with traceback)
        self.last_rx = None      # monotonic time of the last datagram from the simulator
        self.last_error = ''
        self.last_foreign = ''
        self.data_length_mismatch = 0   # decoded by their length although data_length disagreed
        self.last_mismatch = ''         # what the last of them carried and what was expected
        self.counts = dict.fromkeys(counts, 0)

    def age(self, now=None):
        if self.last_rx is None:
            return None
        return (time.monotonic() if now is None else now) - self.last_rx


class UdpReceiver:
    """Receive on several bound sockets in one thread.

    ``streams`` maps a name to a bound socket; ``handler(name, data, addr, t)``
    is called for each datagram from ``allowed_ip`` (all senders when it is ''
    or '0.0.0.0'); others are counted in ``stats[name].foreign`` and dropped.
    A handler exception is counted in ``stats[name].handler_errors`` (text in
    ``last_error``) and logged through ``log(text)`` with its traceback, at
    most once per 5 s per stream.

    ``on_idle()``, when given, is called after each round that received datagrams, once every
    socket is drained: the moment to do deferred work without delaying a datagram (the LiDAR
    decodes pieces of its revolution then).  Its exceptions are counted and logged like a
    handler's, on the stream read last.

    :meth:`start` runs :meth:`poll` in a :class:`~morai_bridge.link.workers.Worker`
    (``worker``, also listed by :attr:`workers`); ``on_dead(worker)`` is
    called if it fails beyond its restart budget.  :meth:`poll` may instead be
    called from the owner's own loop (the simulator emulator does).
    """

    def __init__(self, streams, allowed_ip, handler, stats=None, log=None, on_dead=None,
                 name='udp_receiver', on_idle=None):
        self.sockets = dict(streams)
        self.allowed_ip = allowed_ip
        self.handler = handler
        self.on_idle = on_idle
        self.stats = stats if stats is not None else {name: StreamStats(name) for name in self.sockets}
        self._sel = selectors.DefaultSelector()
        for stream, s in self.sockets.items():
            self._sel.register(s, selectors.EVENT_READ, stream)
        self._handler_log = {stream: ThrottledLog(log, 5.0) for stream in self.sockets}
        self.worker = Worker(name, self._step, log=log, on_dead=on_dead)

    @property
    def workers(self):
        return (self.worker,)

    def start(self):
        self.worker.start()

    def stop(self):
        """End the worker, then close the selector and the sockets."""
        # If a handler is stuck past the timeout, closing under it makes its
        # poll fail; the worker, already stopping, then ends quietly.
        self.worker.stop(2.0)
        self._sel.close()
        for s in self.sockets.values():
            s.close()

    def poll(self, timeout, monotonic=time.monotonic):
        """Handle whatever arrives within ``timeout`` seconds (one select round)."""
        allowed = self.allowed_ip
        any_ip = allowed in ('', '0.0.0.0')
        stats, handler = self.stats, self.handler
        name = None
        for key, _ in self._sel.select(timeout):
            name = key.data
            recvfrom = key.fileobj.recvfrom
            st = stats[name]
            backlog = 0
            while True:
                try:
                    data, addr = recvfrom(MAX_DATAGRAM)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    # e.g. ECONNREFUSED reported for an earlier send on some stacks
                    break
                now = monotonic()
                if not any_ip and addr[0] != allowed:
                    st.foreign += 1
                    st.last_foreign = '%s:%d' % addr
                    continue
                st.received += 1
                st.last_rx = now
                backlog += len(data)
                try:
                    handler(name, data, addr, now)
                except Exception as e:      # noqa: BLE001 - a bug in a handler must not stop the stream
                    self._handler_failed(name, st, 'handler', e)
            st.bytes += backlog
            if backlog > st.peak_backlog:
                st.peak_backlog = backlog
        if name is not None and self.on_idle is not None:
            try:
                self.on_idle()
            except Exception as e:          # noqa: BLE001 - as for the handler
                self._handler_failed(name, stats[name], 'idle work', e)

    def _handler_failed(self, name, st, what, e):
        st.handler_errors += 1
        st.last_error = f'{what} raised {type(e).__name__}: {e}'
        self._handler_log[name]('UdpReceiver: %s of stream %s raised %s: %s (%d on this stream so far)\n%s' % (
            what, name, type(e).__name__, e, st.handler_errors, traceback.format_exc().rstrip()))

    def _step(self):
        self.poll(0.2)


class ReceivePort:
    """One UDP receive port in a supervised worker (a sensor bridge's socket).

    ``handler(name, data, addr, t)`` runs on the worker's thread for each datagram
    from ``sim_ip`` (``t``: ``time.monotonic()`` when it was read), ``on_idle()``
    whenever the socket is drained (:class:`UdpReceiver`).  ``stats``
    (:class:`StreamStats`) counts received datagrams,
    foreign senders and handler exceptions; ``rcvbuf`` is the receive buffer the
    kernel granted (bytes of payload, i.e. half of what ``SO_RCVBUF`` reports on
    Linux), ``rcvbuf_asked`` what ``~socket_buffer`` asked for.
    """

    def __init__(self, cfg, name, handler, log=None, on_dead=None, on_idle=None):
        sim_ip = resolve_host(cfg.sim_ip, '~sim_ip')
        bind_ip = resolve_host(cfg.bind_ip, '~bind_ip')
        self.name = name
        self.port = cfg.port
        self.rcvbuf_asked = int(cfg.socket_buffer)
        sock = bind_udp(bind_ip, cfg.port, '~port', rcvbuf=self.rcvbuf_asked)
        self.rcvbuf = grow_receive_buffer(sock, self.rcvbuf_asked)
        self.stats = StreamStats(name)
        self.receiver = UdpReceiver({name: sock}, sim_ip, handler, {name: self.stats}, log=log,
                                    on_dead=on_dead, name=name + '_receiver', on_idle=on_idle)

    @property
    def workers(self):
        return self.receiver.workers

    def kernel_drops(self):
        """Datagrams the kernel dropped on this port, its buffer full (:func:`kernel_drops`), or None."""
        return kernel_drops(self.receiver.sockets[self.name])

    def start(self):
        self.receiver.start()

    def stop(self):
        self.receiver.stop()


def kernel_drops(sock, tables=('/proc/net/udp', '/proc/net/udp6')):
    """Datagrams the kernel dropped on ``sock`` since it was opened, its receive buffer being full
    (the ``drops`` column of Linux's /proc/net/udp, found by the socket's inode), or None where that
    cannot be read (not Linux, or the socket is gone)."""
    try:
        inode = str(os.fstat(sock.fileno()).st_ino)
    except (OSError, ValueError):
        return None
    for table in tables:
        try:
            with open(table) as f:
                for line in f:
                    cols = line.split()
                    if len(cols) > 12 and cols[9] == inode:
                        return int(cols[12])
        except (OSError, ValueError):
            continue
    return None


def granted_buffer(sock):
    # Linux doubles the value set (bookkeeping overhead) and reports the doubled value
    return sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) // 2


def grow_receive_buffer(sock, size):
    """Make the receive buffer at least ``size`` bytes if the kernel lets us: SO_RCVBUF is capped
    by net.core.rmem_max, SO_RCVBUFFORCE (CAP_NET_ADMIN: root) is not.  A normal user gets what
    SO_RCVBUF allows.  Returns the size granted."""
    if granted_buffer(sock) < size:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, size)
    if granted_buffer(sock) < size:
        try:
            sock.setsockopt(socket.SOL_SOCKET, getattr(socket, 'SO_RCVBUFFORCE', 33), size)
        except OSError:     # EPERM without CAP_NET_ADMIN
            pass
    return granted_buffer(sock)


class UdpSender:
    """One socket for every outgoing message type, sent to ``host``:port."""

    def __init__(self, bind_ip, host):
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((bind_ip, 0))
        self.sent = 0
        self.errors = 0
        self.last_error = ''
        self.closed = False

    def send(self, port, data):
        """True when sent; False on a send error (counted, ``last_error``) or once :meth:`close` began
        (not an error: a thread that sends while the owner shuts down)."""
        if self.closed:
            return False
        try:
            self.sock.sendto(data, (self.host, port))
        except OSError as e:
            if self.closed:
                return False
            self.errors += 1
            self.last_error = '%s:%d: %s' % (self.host, port, e.strerror or e)
            return False
        self.sent += 1
        return True

    def close(self):
        self.closed = True
        self.sock.close()
