"""morai_bag_check: did a recording lose anything? Per topic and publisher: messages, rate, gaps, first message.

    rosrun morai_msgs morai_bag_check BAG [BAG ...] [--gap-factor K] [--min-messages N]
                                      [--irregular TOPIC ...] [--topic TOPIC ...] [--joined]

``rosbag info`` gives counts, and a count looks like a loss when it is not: rosbag subscribes to each
publisher when the master tells it of it, so a topic's first message may come a second or so after the
bag's first; what was published before that never reached rosbag.  This program says, for every
publisher of every topic (rosbag's connection header names it, ``callerid``), whether messages are
missing *between* its first message in the bag and its last:

- **by header.seq** where the type begins with a Header that rospy numbers (genpy's ``_has_header``,
  what ``rospy.msg.serialize_message`` tests): a publisher numbers what it sends, one more per message,
  so a number that is skipped is a message the bag lacks.  The seq is read from the serialized bytes
  (it is their first four, little-endian: ``Header`` is the type's first field and ``seq`` the Header's);
  nothing is deserialized.  A seq that goes back is a restart of the publisher (noted, not a loss); a
  publisher that leaves every seq the same (unset) is checked by its intervals instead.
- **by intervals** otherwise (``tf2_msgs/TFMessage``, ``rosgraph_msgs/Clock``, types without a Header):
  the times the bag received the messages; a gap is an interval longer than ``--gap-factor`` times the
  publisher's median interval, unless a burst follows it that brings the messages late (a recorder
  that was busy for a moment receives what waited all at once: intervals under half the median, one
  per message held up).  The number lost is an estimate: the interval over the median, minus one, minus
  the burst.  Intervals cannot tell a loss from a publisher that paused; header.seq can.  A publisher
  with fewer than ``--min-messages`` messages, and the topics published on events rather than at a rate
  (``--irregular``, and always :data:`IRREGULAR`: ``/tf_static``, ``/rosout``, ``/rosout_agg`` and
  ``/camera/boxes``, which the camera bridge publishes only while objects are in view) are not judged.

``/diagnostics`` (``diagnostic_msgs/DiagnosticArray`` begins with a Header) is checked by header.seq
per publisher: its irregular rate (1 Hz plus every forced update) does not matter there.

Exit status: 0 when no gap was found, 1 when one was (each listed with topic, publisher, seq or time),
2 on a usage error or a bag that cannot be read (an unindexed ``.bag.active`` included: ``rosbag
reindex`` it).
"""
import collections
import statistics
import struct
import sys

from morai_bridge.configuration.params import Param, command_line

#: a Header's seq: the first four bytes of a message whose type begins with a Header
SEQ = struct.Struct('<I')
#: topics published on events, never judged by their intervals (``--irregular`` adds to these): latched
#: transforms, log messages, and the camera bridge's boxes (a MarkerArray only while objects are in view:
#: MORAI sends no BOX datagram without a box)
IRREGULAR = ['/tf_static', '/rosout', '/rosout_agg', '/camera/boxes']
#: gaps (and notes) listed per publisher; the rest are counted
GAPS_LISTED = 10

BY_SEQ = 'header.seq'
BY_INTERVALS = 'intervals'
NOT_JUDGED = 'not judged'

#: the command line (configuration.params)
OPTIONS = [
    Param('bags', [], 'the bags to check (each on its own unless --joined)', positional=True, nargs='+',
          metavar='BAG'),
    Param('gap_factor', 3.0, 'by intervals, a gap is an interval longer than this many times the publisher\'s '
          'median interval', above=1.0, metavar='K'),
    Param('min_messages', 10, 'a publisher checked by intervals needs at least this many messages (fewer: '
          'not judged)', minimum=3, metavar='N'),
    Param('irregular', [], 'a topic published on events, not at a rate: its intervals are not judged (repeat '
          'the option; %s always are)' % ', '.join(IRREGULAR), repeat=True, metavar='TOPIC'),
    Param('topic', [], 'check only this topic (repeat the option; default: every topic)', repeat=True,
          metavar='TOPIC'),
    Param('joined', False, 'the bags are the pieces of one recording (rosbag record --split): checked as one, '
          'in the order of their start times', switch=True),
]

LEGEND = """\
  first s: when the publisher's first message came, in seconds after the bag's first message.  rosbag
    subscribes to a publisher once the master tells it of it, so a topic may begin a second or so late;
    what was published before that never reached rosbag.  A late first message is not a loss (it is why
    a topic holds fewer messages than its rate times the bag's length).
  lost: messages missing between the publisher's first message in the bag and its last: by header.seq
    exact, by intervals an estimate (an interval over %s x the median, not made up by a burst after it)."""


class Gap:
    """Messages missing in one place: ``lost`` of them between the messages at ``since`` and ``until``
    (seconds after the bag's first message); ``what`` says how it shows."""
    __slots__ = ('lost', 'since', 'until', 'what')

    def __init__(self, lost, since, until, what):
        self.lost, self.since, self.until, self.what = lost, since, until, what


class Track:
    """What one publisher sent on one topic, as the bag holds it: receive times and (numbered types)
    header.seq, in bag order; :meth:`judge` finds the gaps."""
    __slots__ = ('topic', 'publisher', 'numbered', 'times', 'seqs', 'method', 'gaps', 'notes')

    def __init__(self, topic, publisher, numbered):
        self.topic = topic
        self.publisher = publisher
        self.numbered = numbered        # the type begins with a Header rospy numbers
        self.times = []
        self.seqs = []
        self.method = None              # BY_SEQ, BY_INTERVALS or why it is not judged
        self.gaps = []
        self.notes = []

    def add(self, data, t):
        """One message: its serialized bytes and the bag's time [s]."""
        self.times.append(t)
        if self.numbered:
            self.seqs.append(SEQ.unpack_from(data)[0])

    @property
    def judged(self):
        return self.method in (BY_SEQ, BY_INTERVALS)

    @property
    def lost(self):
        return sum(g.lost for g in self.gaps)

    @property
    def rate(self):
        span = self.times[-1] - self.times[0]
        return (len(self.times) - 1) / span if span > 0 else None

    def judge(self, start, gap_factor, min_messages, irregular):
        """Set ``method``, ``gaps`` and ``notes``; ``start`` is the bag's first message [s]."""
        if self.numbered and (len(self.seqs) == 1 or len(set(self.seqs)) > 1):
            self.method = BY_SEQ
            self._by_seq(start)
            return
        if self.numbered:
            self.notes.append(f'header.seq unset (always {self.seqs[0]}): checked by intervals')
        if self.topic in irregular:
            self.method = f'{NOT_JUDGED} (irregular)'
        elif len(self.times) < min_messages:
            self.method = f"{NOT_JUDGED} ({_count(len(self.times), 'message')})"
        else:
            self.method = BY_INTERVALS
            self._by_intervals(start, gap_factor)

    def _by_seq(self, start):
        seqs, times = self.seqs, self.times
        for i in range(1, len(seqs)):
            step = seqs[i] - seqs[i - 1]
            if step == 1:
                continue
            since, until = times[i - 1] - start, times[i] - start
            if step > 1:
                self.gaps.append(Gap(step - 1, since, until, f'header.seq {seqs[i - 1]} then {seqs[i]}'))
            elif step == 0:
                self.notes.append(f'header.seq {seqs[i]} twice, at {until:.2f} s')
            else:
                self.notes.append(f'restarted between {since:.2f} s and {until:.2f} s: header.seq {seqs[i - 1]} '
                                  f'then {seqs[i]} (not counted as a loss)')

    def _by_intervals(self, start, gap_factor):
        times = self.times
        intervals = [b - a for a, b in zip(times, times[1:])]
        median = statistics.median(intervals)
        if median <= 0:
            self.method = f'{NOT_JUDGED} (no interval)'
            return
        for i, dt in enumerate(intervals):
            if dt <= gap_factor * median:
                continue
            burst = 0           # the messages that come at once after it: they waited, they are not lost
            while i + 1 + burst < len(intervals) and intervals[i + 1 + burst] < median / 2:
                burst += 1
            lost = round(dt / median) - 1 - burst
            since, until = times[i] - start, times[i + 1] - start
            if lost > 0:
                self.gaps.append(Gap(lost, since, until, f'{dt:.3f} s without a message, {dt / median:.0f} x the '
                                                         f'median {median:.3f} s'))
            else:
                self.notes.append(f'late, not lost: nothing between {since:.2f} s and {until:.2f} s, then '
                                  f'{burst + 1} messages at once')


class Report:
    """One recording (a bag, or --joined pieces): its tracks by (topic, publisher), in first-seen order."""

    def __init__(self, paths):
        self.paths = paths
        self.tracks = collections.OrderedDict()
        self.start = self.end = None
        self.messages = 0

    def read(self, bags, topics=None):
        """Read every message of ``bags`` (open rosbag.Bag objects), raw: nothing is deserialized."""
        tracks = self.tracks
        for bag in bags:
            if bag.get_message_count() == 0:
                continue
            start, end = bag.get_start_time(), bag.get_end_time()
            self.start = start if self.start is None else min(self.start, start)
            self.end = end if self.end is None else max(self.end, end)
            for topic, raw, t, header in bag.read_messages(topics=topics or None, raw=True,
                                                           return_connection_header=True):
                # raw: (datatype, serialized bytes, md5sum, position, genpy class from the bag's definition)
                key = (topic, header.get('callerid'))
                track = tracks.get(key)
                if track is None:
                    track = tracks[key] = Track(topic, _text(key[1]) or '(unknown)', raw[4]._has_header)
                track.add(raw[1], t.to_sec())
                self.messages += 1

    def judge(self, gap_factor, min_messages, irregular):
        for track in self.tracks.values():
            track.judge(self.start, gap_factor, min_messages, irregular)

    @property
    def lost(self):
        return sum(t.lost for t in self.tracks.values())

    def text(self, gap_factor):
        """The report, as printed."""
        tracks = sorted(self.tracks.values(), key=lambda t: (t.topic, t.publisher))
        names = ', '.join(self.paths)
        if not tracks:
            return f'{names}: no messages\n'
        out = [f'{names}: {self.end - self.start:.1f} s from its first message to its last, {self.messages} '
               f'messages, {len({t.topic for t in tracks})} topics, {len(tracks)} publishers']
        head = ('topic', 'publisher', 'messages', 'rate Hz', 'first s', 'checked by', 'lost')
        rows = [(t.topic, t.publisher, str(len(t.times)), '-' if t.rate is None else f'{t.rate:.2f}',
                 f'{t.times[0] - self.start:.2f}', t.method, str(t.lost) if t.judged else '-') for t in tracks]
        widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
        right = (False, False, True, True, True, False, True)
        for r in [head] + rows:
            out.append('  ' + '  '.join(c.rjust(w) if a else c.ljust(w) for c, w, a in zip(r, widths, right)).rstrip())
        for t in tracks:
            who = f'{t.topic} from {t.publisher}'
            out += [f'  GAP {who}: {g.lost} lost between {g.since:.2f} s and {g.until:.2f} s ({g.what})'
                    for g in t.gaps[:GAPS_LISTED]]
            if len(t.gaps) > GAPS_LISTED:
                out.append(f'  ... {who}: {len(t.gaps) - GAPS_LISTED} more gaps')
            out += [f'  note {who}: {n}' for n in t.notes[:GAPS_LISTED]]
            if len(t.notes) > GAPS_LISTED:
                out.append(f'  ... {who}: {len(t.notes) - GAPS_LISTED} more notes')
        out.append(LEGEND % f'{gap_factor:g}')
        by = collections.Counter(t.method if t.judged else NOT_JUDGED for t in tracks)
        counted = 'publishers: ' + ', '.join(f'{by[m]} {m}' if m == NOT_JUDGED else f'{by[m]} by {m}'
                                             for m in (BY_SEQ, BY_INTERVALS, NOT_JUDGED) if by[m])
        gappy = [t for t in tracks if t.gaps]
        if gappy:
            out.append(f"result: GAPS: {_count(self.lost, 'message')} lost by {_count(len(gappy), 'publisher')} "
                       f"on {_count(len({t.topic for t in gappy}), 'topic')} ({counted})")
        else:
            out.append(f'result: no gap ({counted})')
        return '\n'.join(out) + '\n'


def _count(n, noun):
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _text(value):
    """A connection header's value (rosbag gives bytes or str)."""
    if isinstance(value, bytes):
        return value.decode('utf-8', 'replace')
    return value or ''


def _parser():
    return command_line(OPTIONS, prog='morai_bag_check', description='Per topic and publisher of a bag: messages, '
                        'rate, messages lost (by header.seq, or by intervals for types without a Header) and '
                        'when the first message came (a late first message is not a loss). Exit status 0: no '
                        'gap, 1: a gap, 2: a usage error or a bag that cannot be read (docs/day_one.md).')


def open_bag(path):
    """rosbag.Bag(path), or a ValueError saying plainly why not."""
    import rosbag
    try:
        return rosbag.Bag(path)
    except rosbag.ROSBagUnindexedException:
        raise ValueError(f'{path} is not indexed (a recording that did not close): rosbag reindex {path}') from None
    except (OSError, rosbag.ROSBagException) as e:
        raise ValueError(f'cannot read {path}: {e}') from None


def main(argv=None):
    args = _parser().parse_args(argv)
    bags = []
    try:
        for path in args.bags:
            try:
                bags.append((path, open_bag(path)))
            except ValueError as e:
                sys.stderr.write(f'morai_bag_check: {e}\n')
                return 2
        groups = [bags] if args.joined else [[b] for b in bags]
        irregular = set(IRREGULAR + args.irregular)
        status = 0
        for group in groups:
            group.sort(key=lambda b: b[1].get_start_time() if b[1].get_message_count() else 0.0)
            report = Report([p for p, _ in group])
            try:
                report.read([b for _, b in group], args.topic)
            except Exception as e:      # a damaged chunk: ROSBagException, KeyError, UnicodeDecodeError, ...
                sys.stderr.write(f"morai_bag_check: cannot read {', '.join(report.paths)}: {type(e).__name__}: {e}\n")
                return 2
            report.judge(args.gap_factor, args.min_messages, irregular)
            sys.stdout.write(report.text(args.gap_factor))
            if report.lost:
                status = 1
        return status
    finally:
        for _, bag in bags:
            bag.close()
