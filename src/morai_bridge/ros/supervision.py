"""Worker supervision on the ROS side: logging, /diagnostics and exit on a dead worker.

:class:`RosTimer` does rospy.Timer's job (a callback every period of ROS time, so
also under ``/use_sim_time``) in a supervised worker: a callback that raises is
logged with its traceback and the timer goes on (a rospy.Timer thread would end
silently, and with it, say, the node's /diagnostics).

The workers themselves (:class:`morai_bridge.link.workers.Worker`) know no ROS.  A node
passes them :meth:`NodeSupervisor.log` and :meth:`NodeSupervisor.on_dead`, adds
:meth:`NodeSupervisor.diagnostics` to its updater (:func:`make_updater`: one published by a
supervised RosTimer), and ends its ``main()`` with
:meth:`NodeSupervisor.spin`, which returns the exit status: 1 when a worker died
(so that roslaunch's ``respawn`` can act), 0 on an ordinary shutdown.
"""
import diagnostic_updater
import rospy
from std_msgs.msg import String

from morai_bridge.configuration.params import Param
from morai_bridge.link.workers import Worker, worker_diagnostics

#: every node with worker threads declares it
FAULT_INJECTION = Param('fault_injection', False, 'tests only: a std_msgs/String on ~inject_fault naming a worker '
                        'makes that worker raise once (it must be reported and resume)')


class NodeSupervisor:

    def __init__(self, node_name, cfg=None):
        self.node_name = node_name
        self.cfg = cfg
        self.sources = []         # callables returning lists of workers
        self.dead = None          # the worker that could not resume

    def watch(self, workers_of):
        """Supervise the workers that ``workers_of()`` lists (called at every diagnostics update)."""
        self.sources.append(workers_of)

    def workers(self):
        out = []
        for src in self.sources:
            out.extend(src())
        return out

    def log(self, text):
        rospy.logerr('%s: %s', self.node_name, text)

    def on_dead(self, worker):
        """A worker cannot resume: the node must not idle on without it."""
        if self.dead is None:
            self.dead = worker
        rospy.logfatal('%s: worker %s is dead (%s); shutting down with exit status 1 so that respawn can '
                       'act', self.node_name, worker.name, worker.dead_reason or worker.last_error)
        rospy.signal_shutdown(f'worker {worker.name} dead')

    def add_to(self, updater, name='Workers'):
        """Add the workers' entry to ``updater``; with ``~fault_injection`` also listen on ~inject_fault."""
        updater.add(name, self.diagnostics)
        if self.cfg is not None and self.cfg.get('fault_injection', False):
            self.enable_fault_injection()

    def enable_fault_injection(self, topic='~inject_fault'):
        """For tests (``~fault_injection:=true``): a std_msgs/String naming a worker on ``topic``
        makes that worker's next iteration raise, as a bug would."""
        def inject(m):
            for w in self.workers():
                if w.name == m.data:
                    rospy.logwarn('%s: injecting a fault into worker %s', self.node_name, w.name)
                    w.inject(RuntimeError(f'fault injected into {w.name} through {topic}'))
                    return
            rospy.logwarn('%s: no worker named %r (workers: %s)', self.node_name, m.data,
                          ', '.join(w.name for w in self.workers()))
        rospy.Subscriber(topic, String, inject, queue_size=10)

    def diagnostics(self, stat):
        level, summary, values = worker_diagnostics(self.workers())
        stat.summary(level, summary)
        for k, v in values:
            stat.add(k, v)
        return stat

    def spin(self):
        """rospy.spin(); the exit status for main(): 1 after a dead worker, else 0."""
        rospy.spin()
        return 1 if self.dead is not None else 0


class RosTimer:
    """``callback()`` every ``period_s`` seconds of ROS time, in a :class:`~morai_bridge.link.workers.Worker`
    named ``name`` (restarted after an error, dead after too many: see Worker).  With a ``supervisor``
    the worker logs through it, is listed in its 'Workers' entry and ends the node when dead.
    Ticks missed while a callback ran long are skipped, not queued (as rospy.Timer does).  Started at
    once; it ends with the node (rospy shutdown) or :meth:`stop`."""

    #: longest single sleep on /clock time, so that stop() and shutdown are noticed within it [s]
    MAX_SLEEP = 0.1

    def __init__(self, name, period_s, callback, supervisor=None):
        if not period_s > 0:
            raise ValueError(f'RosTimer {name}: period must be > 0 s, not {period_s!r}')
        self.period = rospy.Duration.from_sec(period_s)
        self.callback = callback
        self._next = None
        self.ticks = 0
        log, on_dead = (supervisor.log, supervisor.on_dead) if supervisor is not None else (None, None)
        self.worker = Worker(name, self._step, log=log, on_dead=on_dead)
        if supervisor is not None:
            supervisor.watch(lambda: [self.worker])
        self.worker.start()

    def stop(self):
        self.worker.stop()

    def _step(self):
        if rospy.is_shutdown():
            self.worker.stop()          # from its own thread: ends after this iteration
            return
        try:
            now = rospy.get_rostime()
            if self._next is None or now < self._next - self.period:      # first tick, or time jumped back
                self._next = now + self.period
            if now < self._next:
                left = (self._next - now).to_sec()
                if rospy.rostime.is_wallclock():
                    self.worker.wait(left)          # one wake-up per tick; stop() ends the wait
                else:
                    rospy.sleep(min(left, self.MAX_SLEEP))     # /clock time: rospy's wait on the clock
                return
        except rospy.ROSInterruptException:
            self.worker.stop()
            return
        except rospy.ROSTimeMovedBackwardsException:
            self._next = None
            return
        self._next += self.period
        if self._next <= now:          # fell behind (a long callback): skip the missed ticks
            self._next = now + self.period
        self.ticks += 1
        try:
            self.callback()
        except Exception:
            if rospy.is_shutdown():     # a tick that was running when the node shut down: its publishers
                self.worker.stop()      # are closed under it ("publish() to a closed topic"); not a fault
                return
            raise


def make_updater(hardware_id, supervisor, period=1.0):
    """A diagnostic_updater.Updater published every ``period`` seconds by a supervised
    :class:`RosTimer` (worker ``diagnostics``, watched by ``supervisor``,
    a NodeSupervisor); returns (updater, timer).

    The timer calls ``force_update()``: ``Updater.update()`` would ask the parameter server for
    ``~diagnostic_period`` on every call (rospy does not cache a parameter that is not set: one
    XML-RPC call per second per node) and skip a tick that comes a little early."""
    updater = diagnostic_updater.Updater()
    updater.setHardwareID(hardware_id)
    timer = RosTimer('diagnostics', period, updater.force_update, supervisor)
    return updater, timer
