"""/diagnostics of the UDP bridge: one entry per receive stream, one for commands,
one for the simulator's reported control state (why a command 'does nothing')."""
import time

from morai_bridge.link.workers import ERROR, OK, WARN
from morai_bridge.ros.udp_bridge.command_sender import ZERO_AS_NAMES
from morai_bridge.ros.udp_bridge.sim_to_ros import sim_proc_state
from morai_bridge.wire.udp import streams
from morai_bridge.wire.enums import CtrlMode, Gear, SimProc, name_of

#: a ctrl command within this many seconds counts as 'commanding' [s]
ACTIVE_S = 2.0



class BridgeDiagnostics:

    def __init__(self, cfg, updater, receiver, commands=None):
        self.cfg = cfg
        self.rx = receiver
        self.tx = commands
        self._rates = {}
        for name in receiver.enabled:
            updater.add('UDP %s (port %d)' % (name, cfg[streams.BY_NAME[name].param]), self._stream_task(name))
        if commands is not None:
            updater.add('UDP commands', self.commands)
            updater.add('Simulator control state', self.control)

    def map_text(self):
        m = self.rx.map_info
        return m.describe() if m is not None else 'offsets from ~gps_east_offset / ~gps_north_offset'

    def sim_paused(self):
        """Whether the simulator's last SimStatus said paused (None: no SimStatus yet)."""
        w = self.rx.sim_status
        if w is None:
            return None
        return sim_proc_state(w.platform, w.status) == SimProc.PAUSE   # as /sim/process/state/... says it

    def _stream_task(self, name):
        st = self.rx.stats[name]
        stream = streams.BY_NAME[name]
        event = stream.event

        def task(stat):
            now = time.monotonic()
            counts = dict(st.counts)              # one read: the receive thread goes on counting
            prev = self._rates.get(name)
            rate, grew, span, published = 0.0, dict.fromkeys(counts, 0), 0.0, None
            if prev is not None and now > prev[1]:
                span = now - prev[1]
                rate = (st.received - prev[0]) / span
                grew = {k: v - prev[2].get(k, 0) for k, v in counts.items()}
                published = st.published - prev[3]
            self._rates[name] = (st.received, now, counts, st.published)
            age = st.age(now)
            if age is None:
                level, text = ((OK, 'no event yet') if event else
                               (WARN, 'no packet yet on port %d' % self.cfg[stream.param]))
            elif age > self.cfg.stale_timeout and not event:
                level, text = WARN, f'stale: last packet {age:.1f} s ago'
            elif rate > 0 and published == 0 and grew.get('duplicates'):
                # every datagram of the window repeats the time of the last published: the simulator's clock
                # stands still (paused, as its SimStatus says, or a frozen simulator); nothing is published
                if self.sim_paused():
                    level, text = OK, (f'paused: {rate:.1f} Hz received, each with the time of the last '
                                       'published, so none published (the newest-sample rule)')
                else:
                    level, text = WARN, (f"{rate:.1f} Hz received, none published: each repeats the time of "
                                         "the last published (the simulator's clock stands still)")
            else:
                level, text = OK, f'{rate:.1f} Hz'
            if st.decode_errors or st.wrong_type:
                level = max(level, WARN)
                text += '; %d malformed, %d of another type' % (st.decode_errors, st.wrong_type)
            if st.foreign:
                level = max(level, WARN)
                text += '; %d from unexpected hosts' % st.foreign
            if st.data_length_mismatch:
                level = max(level, WARN)
                text += '; %d decoded despite an unexpected data_length (last: %s)' % (
                    st.data_length_mismatch, st.last_mismatch)
            for c in stream.counters:
                value = grew[c.name] if c.recent else counts[c.name]
                if value and c.warning:
                    level = max(level, WARN)
                    text += '; ' + c.warning.format(count=value) + (' in the last %.1f s' % span if c.recent else '')
            if st.handler_errors:
                level = ERROR
                text += '; %d datagrams hit a bridge error (see the log)' % st.handler_errors
            stat.summary(level, text)
            stat.add('port', self.cfg[stream.param])
            stat.add('rate [Hz]', f'{rate:.1f}')
            stat.add('published rate [Hz]', '' if published is None else f'{published / span:.1f}')
            stat.add('received', st.received)
            stat.add('published', st.published)
            stat.add('decode errors', st.decode_errors)
            stat.add('wrong type', st.wrong_type)
            stat.add('from unexpected hosts', st.foreign)
            stat.add('bridge errors', st.handler_errors)
            stat.add('last unexpected sender', st.last_foreign)
            stat.add('age of last packet [s]', '' if age is None else f'{age:.3f}')
            stat.add('last error', st.last_error)
            stat.add('data_length mismatches', st.data_length_mismatch)
            stat.add('last data_length mismatch', st.last_mismatch)
            if stream.stamp == streams.PACKET:
                stat.add('invalid packet stamps', self.rx.bad_stamps)
            for c in stream.counters:
                stat.add(c.label, counts[c.name])
                if c.rate:
                    stat.add('%s [1/s]' % c.name.replace('_', ' '), '%.1f' % (grew[c.name] / span if span else 0.0))
            if name == 'gps':
                stat.add('map', self.map_text())
                stat.add('offsets east / north [m]', '%.3f / %.3f' % (self.cfg.gps_east_offset,
                                                                      self.cfg.gps_north_offset))
            return stat
        return task

    def commands(self, stat):
        tx = self.tx
        refused = sum(tx.tx_refused.values())
        if refused:
            stat.summary(WARN, '%d commands refused (last: %s)' % (refused, tx.last_refusal))
        elif tx.sender.errors:
            stat.summary(WARN, f'send errors: {tx.sender.last_error}')
        else:
            stat.summary(OK, '%d packets sent' % tx.sender.sent)
        for n in tx.tx_counts:
            stat.add(f'{n} sent', tx.tx_counts[n])
            stat.add(f'{n} refused', tx.tx_refused[n])
        stat.add('last refusal', tx.last_refusal)
        for what, count in sorted(tx.adjusted.items()):
            stat.add(what, count)
        stat.add('send errors', tx.sender.errors)
        state = tx.state.snapshot()          # one snapshot: gear and mode of one change
        stat.add('gear sent', name_of(Gear, state.gear))
        stat.add('ctrl_mode sent', name_of(CtrlMode, state.ctrl_mode).lower())
        stat.add('vehicle profile', tx.profile.name)
        stat.add('sim_version', self.rx.version.name)
        stat.add('map', self.map_text())
        stat.add('steering_sign / status / ghost', '%d / %d / %d' % (
            self.cfg.steering_sign, self.cfg.status_steering_sign, self.cfg.ghost_steering_sign))
        stat.add('ctrl_cmd bytes', self.cfg.ctrl_cmd_bytes)
        stat.add('max steering [deg]', f'{tx.max_steering_deg:.2f}')
        return stat

    def control(self, stat):
        """Why a command 'does nothing': refused commands, the watchdog's brake, the simulator's reported
        mode and gear."""
        s = self.rx.status
        tx = self.tx
        gear = tx.state.snapshot().gear      # one snapshot per diagnostic
        now = time.monotonic()
        active = tx.ctrl_sent_t is not None and now - tx.ctrl_sent_t < ACTIVE_S
        problems = []
        refused = tx.refused_recently('ctrl_cmd', ACTIVE_S, now)
        if refused:
            problems.append(f'ctrl commands refused (in the last {ACTIVE_S:.0f} s; {tx.tx_refused["ctrl_cmd"]} in '
                            f'all): {refused}')
        if tx.watchdog_braked:
            problems.append('no /ctrl_cmd for %.1f s: the watchdog sent a braking command (~ctrl_cmd_timeout %.2f s)'
                            % (now - tx.ctrl_sent_t, self.cfg.ctrl_cmd_timeout))
        if s is not None and active and s.ctrl_mode != CtrlMode.AUTO:
            problems.append('simulator is in %s control mode (ctrl_mode=%d): ctrl commands are ignored; '
                            'switch the ego to automatic mode in the simulator'
                            % (name_of(CtrlMode, s.ctrl_mode).lower(), s.ctrl_mode))
        if s is not None and active and s.gear != gear and s.ctrl_mode == CtrlMode.AUTO:
            problems.append(f'simulator reports gear {name_of(Gear, s.gear)} but {name_of(Gear, gear)} is commanded')
        if problems:
            stat.summary(WARN, '; '.join(problems))
        elif s is None:
            stat.summary(OK, 'no ego status yet')
        else:
            text = 'commands active' if active else f'no ctrl command in the last {ACTIVE_S:.0f} s'
            zero = tx.adjusted.get(f'longlCmdType 0 sent as {tx.zero_as}', 0)
            if active and zero:
                text += f'; longlCmdType 0 taken as {tx.zero_as} ({ZERO_AS_NAMES[tx.zero_as]})'
            stat.summary(OK, text)
        if s is not None:
            stat.add('reported ctrl_mode', '%d (%s)' % (s.ctrl_mode, name_of(CtrlMode, s.ctrl_mode).lower()))
            stat.add('reported gear', '%d (%s)' % (s.gear, name_of(Gear, s.gear)))
        stat.add('commanded gear', '%d (%s)' % (gear, name_of(Gear, gear)))
        stat.add('commanding', str(active))
        stat.add('longlCmdType 0 taken as', '%d (%s)' % (tx.zero_as, ZERO_AS_NAMES[tx.zero_as]))
        stat.add('ctrl_cmd refused', tx.tx_refused['ctrl_cmd'])
        stat.add('ctrl_cmd timeout [s]', f'{self.cfg.ctrl_cmd_timeout:.2f}' if tx.watchdog else 'off')
        stat.add('watchdog brakes', tx.watchdog_brakes)
        return stat
