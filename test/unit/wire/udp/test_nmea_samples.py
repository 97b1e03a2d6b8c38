"""One GPS sample per fix time (morai_bridge.wire.udp.nmea.GpsSamples, merge): the sentences MORAI sends
for one sample, in either order or alone, give one merged sentence, given out once.  Expected values come
from the shared 2024 capture (RMC before GGA, 5 Hz) where it is present, and from sentences written
here in the simulator's form."""
import datetime
from pathlib import Path

import pytest

import helpers
from morai_bridge.wire.udp import nmea
from morai_bridge.wire.capture import read_capture

CAPTURES = Path(helpers.ROOT).parent / "shared" / "captures"
DAY = datetime.date(2024, 9, 12)


def gga(t, alt=29.1, form="tenths", lat=37.24, lon=126.77):
    return nmea.make_gga(t, lat, lon, alt, time_form=form)


def rmc(t, form="tenths", lat=37.24, lon=126.77):
    return nmea.make_rmc(t, DAY, lat, lon, time_form=form)


def at(second, ms=0):
    return datetime.time(22, 30, second, ms * 1000)


def feed(samples, sentences):
    """[(types merged, raw time field, stamp)] given out, sentence by sentence (the stamp is the index)."""
    out = []
    for i, s in enumerate(sentences):
        out.append([(m.sentence_type, m.raw.split(",")[1], stamp) for m, stamp in samples.add(s, i)])
    return out


def test_rmc_then_gga_is_one_sample_given_at_the_gga():
    """The 2024 capture's order: the RMC waits for the GGA of its time, which completes the sample."""
    g = nmea.GpsSamples()
    got = feed(g, [rmc(at(47, 500)), gga(at(47, 500)), rmc(at(47, 700)), gga(at(47, 700))])
    assert got == [[], [("GGA", "223047.5", 0)], [], [("GGA", "223047.7", 2)]]
    assert (g.gga, g.late, g.merged) == (True, 0, 2)


def test_the_merged_sample_has_the_ggas_altitude_and_the_rmcs_status():
    g = nmea.GpsSamples()
    assert g.add(rmc(at(47, 500)), "first") == []
    [(m, stamp)] = g.add(gga(at(47, 500), alt=31.5), "second")
    assert stamp == "first"          # the sample's first sentence's stamp
    assert (m.sentence_type, m.altitude, m.fix_quality, m.status, m.date) == ("GGA", 31.5, 1, "A", DAY)
    assert m.raw.startswith("$GPGGA,223047.5,")


def test_gga_then_rmc_is_given_at_the_gga_and_the_rmc_merged():
    """The emulator's order: the GGA is a whole sample at once; its RMC adds nothing to publish."""
    g = nmea.GpsSamples()
    got = feed(g, [gga(at(47, 500)), rmc(at(47, 500)), gga(at(47, 600)), rmc(at(47, 600))])
    assert got == [[("GGA", "223047.5", 0)], [], [("GGA", "223047.6", 2)], []]
    assert (g.late, g.merged) == (0, 2)


def test_gga_alone_is_one_sample_each():
    g = nmea.GpsSamples()
    got = feed(g, [gga(at(47, 100 * k)) for k in range(4)])
    assert [len(x) for x in got] == [1, 1, 1, 1]
    assert g.late == 0


def test_rmc_alone_waits_once_then_is_given_at_once():
    """A simulator that sends only RMC: the first sample waits for a GGA that does not come and is given
    when the second opens (late, not lost); from then on each RMC at once."""
    g = nmea.GpsSamples()
    got = feed(g, [rmc(at(47, 100 * k)) for k in range(4)])
    assert got == [[], [("RMC", "223047.0", 0), ("RMC", "223047.1", 1)], [("RMC", "223047.2", 2)],
                   [("RMC", "223047.3", 3)]]
    assert (g.gga, g.late) == (False, 1)


def test_a_sample_whose_gga_is_lost_comes_late_not_never():
    g = nmea.GpsSamples()
    feed(g, [rmc(at(47, 0)), gga(at(47, 0))])          # learned: samples carry a GGA
    got = feed(g, [rmc(at(47, 200)), rmc(at(47, 400)), gga(at(47, 400))])
    assert got == [[], [("RMC", "223047.2", 0)], [("GGA", "223047.4", 1)]]
    assert (g.gga, g.late) == (True, 1)         # one lost GGA: the next RMC still waits for its GGA


def test_a_repeated_sentence_is_a_duplicate_and_an_older_one_reordered():
    """The link's faults: a sentence sent twice is taken once, one older than the last sample is dropped;
    both counted.  A sentence of the same time with other text (a moved position) is still a sample."""
    g = nmea.GpsSamples()
    s = gga(at(47, 500))
    assert [len(g.add(s)) for _ in range(3)] == [1, 0, 0]
    assert g.counts['duplicates'] == 2
    assert g.add(rmc(at(47, 500))) == []               # the RMC of the sample: merged, not a duplicate
    assert len(g.add(gga(at(47, 700)))) == 1
    assert g.add(rmc(at(47, 500))) == [] and g.add(gga(at(47, 500))) == []
    assert g.counts['reordered'] == 2 and g.counts['duplicates'] == 2
    assert len(g.add(gga(at(47, 700), lat=37.25))) == 1  # same time, other text: a new sample (old rule)
    # back by a second or more: the clock started again
    assert len(g.add(gga(at(40, 0)))) == 1 and g.counts['clock_restarts'] == 1


def test_25s4_milliseconds_are_ordered_as_milliseconds():
    """25.S4 writes the milliseconds unpadded (.5 = 5 ms, .40 = 40 ms): read as tenths, 47.40 would come
    before 47.5 and every sample after it would look reordered."""
    assert nmea.time_ms('223047.5', 'milliseconds') == nmea.time_ms('223047', 'milliseconds') + 5
    assert nmea.time_ms('223047.5') == nmea.time_ms('223047') + 500
    assert nmea.time_ms('000000.05') == 50
    g = nmea.GpsSamples(time_form='milliseconds')
    out = [len(g.add(gga(at(47, ms), form='milliseconds'))) for ms in (5, 40, 100, 400, 995)]
    assert out == [1, 1, 1, 1, 1] and g.counts['reordered'] == 0
    with pytest.raises(nmea.NmeaError):
        nmea.time_ms('2230a7.5')


def test_midnight_is_not_a_restart():
    g = nmea.GpsSamples()
    assert len(g.add(gga(datetime.time(23, 59, 59, 900000)))) == 1
    assert len(g.add(gga(datetime.time(0, 0, 0, 100000)))) == 1
    assert g.add(gga(datetime.time(23, 59, 59, 950000))) == []
    assert g.counts == {'reordered': 1, 'duplicates': 0, 'clock_restarts': 0}


def test_a_sentence_without_a_time_is_its_own_sample():
    g = nmea.GpsSamples()
    no_time = nmea.build("GP", "GGA", ("", "3714.4040", "N", "12646.4377", "E", "1", "09", "1.0", "29.1", "M",
                                       "0.0", "M", "", ""))
    assert no_time.utc_time is None
    assert g.add(rmc(at(47, 0)), 0) == []
    got = g.add(no_time, 1)
    assert [(m.sentence_type, stamp) for m, stamp in got] == [("RMC", 0), ("GGA", 1)]


def test_25s4_unpadded_milliseconds_are_compared_as_written():
    """25.S4 writes 4 ms as '.4' and 400 ms as '.400': both parse to 0.4 s, but they are two samples."""
    g = nmea.GpsSamples()
    first, second = gga(at(47, 4), form="milliseconds"), gga(at(47, 400), form="milliseconds")
    assert first.utc_time == second.utc_time
    assert (first.raw.split(",")[1], second.raw.split(",")[1]) == ("223047.4", "223047.400")
    assert feed(g, [first, rmc(at(47, 4), form="milliseconds"), second]) == [
        [("GGA", "223047.4", 0)], [], [("GGA", "223047.400", 2)]]


def test_merge_keeps_the_gga_and_fills_what_it_lacks():
    a, b = rmc(at(47, 500)), gga(at(47, 500), alt=12.0)
    for m in (nmea.merge(a, b), nmea.merge(b, a)):
        assert (m.sentence_type, m.altitude, m.status, m.hdop, m.course_deg) == ("GGA", 12.0, "A", 1.0, a.course_deg)
    assert nmea.merge(a, a) is a


@pytest.mark.skipif(not (CAPTURES / "MORAI.pcap").is_file(), reason=f"real captures not available ({CAPTURES})")
def test_the_shared_capture_is_one_sample_per_fix_time():
    """MORAI.pcap (24.R2, September 2024): 22 GPS datagrams on 9091, RMC then GGA of each time, every
    0.2 s: 11 samples, each given at its GGA with the GGA's altitude and the datagram-pair's first stamp."""
    datagrams = [(ts, p) for ts, src, dst, p in read_capture(CAPTURES / "MORAI.pcap") if dst[1] == 9091]
    assert len(datagrams) == 22
    g = nmea.GpsSamples()
    given = [out for ts, p in datagrams for out in g.add(nmea.parse(p), ts)]
    assert len(given) == 11
    assert {m.sentence_type for m, _ in given} == {"GGA"}
    assert {(m.altitude, m.status, m.fix_quality) for m, _ in given} == {(29.1, "A", 1)}
    times = [m.utc_time for m, _ in given]
    assert times == sorted(set(times))
    first_of_pair = [ts for k, (ts, _) in enumerate(datagrams) if k % 2 == 0]
    assert [stamp for _, stamp in given] == first_of_pair
    assert (g.late, g.merged) == (0, 11)
