"""Worker supervision on the ROS side: logging, /diagnostics and exit on a dead worker.

The workers themselves (:class:`morai_bridge.link.workers.Worker`) know no ROS.  A node
passes them :meth:`NodeSupervisor.log` and :meth:`NodeSupervisor.on_dead`, adds
:meth:`NodeSupervisor.diagnostics` to its updater, and ends its ``main()`` with
:meth:`NodeSupervisor.spin`, which returns the exit status: 1 when a worker died
(so that roslaunch's ``respawn`` can act), 0 on an ordinary shutdown.
"""
import rospy
from std_msgs.msg import String

from morai_bridge.ros.params import Param
from morai_bridge.link.workers import worker_diagnostics

#: every node with worker threads declares it
FAULT_INJECTION = Param('fault_injection', False, 'tests only: a std_msgs/String on ~inject_fault naming a worker '
                        'makes that worker raise once (it must be reported and resume)')


class NodeSupervisor(object):

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
        rospy.signal_shutdown('worker %s dead' % worker.name)

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
                    w.inject(RuntimeError('fault injected into %s through %s' % (w.name, topic)))
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
