"""What the closed-loop clients share, as a team keeps it in a utils module next to its nodes: the
path file, the nearest waypoint, curvature, a speed plan that stops at the path's end, a PID, the
two steering laws (pure pursuit, Stanley), and which CtrlCmd field carries the steering angle.

Nothing here imports the bridge: the clients know morai_msgs and rospy, as a stack written for
MORAI's native ROS mode does.
"""
import math

from morai_msgs.msg import CtrlCmd

G = 9.81
VELOCITY = 2      # CtrlCmd.longlCmdType: the target speed in km/h (0 and 1: pedals, 3: acceleration)
#: the CtrlCmd field of the front-wheel angle [rad, + left]: `steering` up to the 2024 message set,
#: `front_steer` in 2026 (a team's code is written for one; ours runs in every set's workspace)
STEER_FIELD = 'front_steer' if 'front_steer' in CtrlCmd.__slots__ else 'steering'


def steer_cmd(angle_rad, **fields):
    """A CtrlCmd with the front-wheel angle in this set's field; longlCmdType as given, else 0."""
    fields[STEER_FIELD] = angle_rad
    return CtrlCmd(**fields)


def velocity_cmd(angle_rad, kmh, brake=0.0):
    """A velocity-mode CtrlCmd (longlCmdType 2): the target speed in km/h and the front-wheel angle."""
    return steer_cmd(angle_rad, longlCmdType=VELOCITY, velocity=kmh, brake=brake)


def read_path(file_name):
    """[(x, y), ...] of a path file: `x y z` a line (tabs or spaces), as recorded from /Ego_topic."""
    path = []
    with open(file_name) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                path.append((float(parts[0]), float(parts[1])))
    return path


def curvatures(path):
    """The curvature [1/m] at each point: the circle through it and its neighbours 2 points away."""
    out = [0.0] * len(path)
    for i in range(2, len(path) - 2):
        (ax, ay), (bx, by), (cx, cy) = path[i - 2], path[i], path[i + 2]
        ab, bc, ca = math.dist((ax, ay), (bx, by)), math.dist((bx, by), (cx, cy)), math.dist((cx, cy), (ax, ay))
        cross = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        if ab * bc * ca > 1e-9:
            out[i] = 2.0 * abs(cross) / (ab * bc * ca)
    return out


class PathTracker:
    """The path and where the ego is on it: the nearest waypoint, searched in a window ahead of the
    last one (a path may pass close to itself), and the distance left to its end."""

    def __init__(self, path, window=60):
        self.path = path
        self.window = window
        self.index = 0
        # distance from each point to the end, along the path
        self.to_end = [0.0] * len(path)
        for i in range(len(path) - 2, -1, -1):
            self.to_end[i] = self.to_end[i + 1] + math.dist(path[i], path[i + 1])

    def update(self, x, y):
        """The nearest waypoint's index after the ego moved to (x, y)."""
        lo, hi = max(0, self.index - 5), min(len(self.path), self.index + self.window)
        self.index = min(range(lo, hi), key=lambda i: (self.path[i][0] - x) ** 2 + (self.path[i][1] - y) ** 2)
        return self.index

    def remaining(self, x, y):
        """Distance left to the last point [m]: along the path from the nearest waypoint, corrected by
        how far the ego is past or short of it."""
        i = self.index
        if i + 1 < len(self.path):
            (ax, ay), (bx, by) = self.path[i], self.path[i + 1]
        else:
            (ax, ay), (bx, by) = self.path[i - 1], self.path[i]
        seg = math.dist((ax, ay), (bx, by)) or 1.0
        along = ((x - self.path[i][0]) * (bx - ax) + (y - self.path[i][1]) * (by - ay)) / seg
        return self.to_end[i] - along

    def ahead(self, distance):
        """Indices from the nearest waypoint to ``distance`` metres ahead of it."""
        end = self.index
        while end + 1 < len(self.path) and self.to_end[self.index] - self.to_end[end + 1] <= distance:
            end += 1
        return range(self.index, end + 1)


class SpeedPlan:
    """Target speed [m/s]: the cap, lower before a curve (lateral acceleration ``friction`` x g on
    its radius, looked at ``preview_m`` ahead), and a braking curve to stand at the path's end
    (``decel`` m/s^2), never below ``creep`` until the end is reached."""

    def __init__(self, tracker, cap_mps, friction, decel, preview_m, creep=0.8):
        self.tracker = tracker
        self.cap = cap_mps
        self.friction = friction
        self.decel = decel
        self.preview = preview_m
        self.creep = creep
        self.kappa = curvatures(tracker.path)

    def target(self, remaining):
        k = max(self.kappa[i] for i in self.tracker.ahead(self.preview))
        v = self.cap if k < 1e-6 else min(self.cap, math.sqrt(self.friction * G / k))
        v = min(v, math.sqrt(2.0 * self.decel * max(0.0, remaining)))
        return max(v, self.creep)


class Pid:
    """PID with the integral clamped (no wind-up while the output saturates)."""

    def __init__(self, kp, ki, kd, dt, i_limit):
        self.kp, self.ki, self.kd, self.dt, self.i_limit = kp, ki, kd, dt, i_limit
        self.integral = 0.0
        self.prev = None

    def output(self, target, current):
        error = target - current
        self.integral = max(-self.i_limit, min(self.i_limit, self.integral + error * self.dt))
        deriv = 0.0 if self.prev is None else (error - self.prev) / self.dt
        self.prev = error
        return self.kp * error + self.ki * self.integral + self.kd * deriv


def to_vehicle(px, py, x, y, yaw):
    """A map point in the vehicle's frame (x forward, y left)."""
    dx, dy = px - x, py - y
    return math.cos(yaw) * dx + math.sin(yaw) * dy, -math.sin(yaw) * dx + math.cos(yaw) * dy


def pure_pursuit(tracker, x, y, yaw, lookahead, wheelbase):
    """Front-wheel angle [rad, + left] towards the first waypoint ahead at least ``lookahead`` away
    (the last one near the end)."""
    path = tracker.path
    gx, gy = path[-1]
    for i in range(tracker.index, len(path)):
        fx, fy = to_vehicle(path[i][0], path[i][1], x, y, yaw)
        if fx > 0.0 and math.hypot(fx, fy) >= lookahead:
            gx, gy = path[i]
            break
    fx, fy = to_vehicle(gx, gy, x, y, yaw)
    alpha = math.atan2(fy, fx)
    return math.atan2(2.0 * wheelbase * math.sin(alpha), max(lookahead, math.hypot(fx, fy)))


def stanley(tracker, x, y, yaw, speed, wheelbase, gain, soft=1.0):
    """Front-wheel angle [rad, + left] by the Stanley law at the front axle (``wheelbase`` / 2 ahead
    of the reported position): heading error plus atan(gain x cross-track error / speed)."""
    fx, fy = x + 0.5 * wheelbase * math.cos(yaw), y + 0.5 * wheelbase * math.sin(yaw)
    path = tracker.path
    i = min(range(max(0, tracker.index - 5), min(len(path), tracker.index + 20)),
            key=lambda k: (path[k][0] - fx) ** 2 + (path[k][1] - fy) ** 2)
    j = min(i + 1, len(path) - 1)
    (ax, ay), (bx, by) = (path[i - 1], path[i]) if j == i else (path[i], path[j])
    path_yaw = math.atan2(by - ay, bx - ax)
    # + when the front axle is to the right of the path (steer left to come back)
    cte = (fx - ax) * math.sin(path_yaw) - (fy - ay) * math.cos(path_yaw)
    heading = math.atan2(math.sin(path_yaw - yaw), math.cos(path_yaw - yaw))
    return heading + math.atan2(gain * cte, soft + abs(speed))


def clamp(v, limit):
    return max(-limit, min(limit, v))
