#!/usr/bin/python3
# Playback as a player does it, through decodebin and playbin: the duration
# in PAUSED, seeks with every flag combination, segment seeks, reverse
# playback, scrubbing and frame stepping, and scenarios in the manner of
# gst-validate's (seek_forward, seek_backward, scrub_forward_seeking,
# reverse_playback, play_15s, change_state_intensive). Every picture is
# compared with the straight decode's picture at its timestamp.
#
# Usage: test_playback.py C63_SYNTH C63_ENC CONFORMANCE_DIR
#
# Copyright (C) 2026 gst-c63 contributors
# SPDX-License-Identifier: LGPL-2.1-or-later
import hashlib
import os
import subprocess
import sys
import tempfile

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

Gst.init(None)

FPS = 25
FRAME = Gst.SECOND // FPS
TIMEOUT = 20 * Gst.SECOND
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)
        if len(FAILURES) >= 30:  # broken seeking: stop before waiting out every seek
            print("giving up after %d failures" % len(FAILURES))
            sys.exit(1)
    return cond


def frame_time(n, fps_n=FPS, fps_d=1):
    return Gst.util_uint64_scale(n, fps_d * Gst.SECOND, fps_n)


class Stream:
    """A .c63 file, its keyframes and the straight decode's pictures."""

    def __init__(self, name, path, keyframes):
        self.name, self.path = name, path
        self.pictures = straight_decode(path)
        self.frames = len(self.pictures)
        self.keyframes = keyframes(self.frames)

    def key_before(self, n):
        return max(k for k in self.keyframes if k <= n)

    def key_after(self, n):
        after = [k for k in self.keyframes if k >= n]
        return after[0] if after else None


def digest(sample):
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    d = hashlib.sha1(info.data).hexdigest()
    buf.unmap(info)
    return buf.pts, d


def wait(pipeline, types, timeout=TIMEOUT):
    msg = pipeline.get_bus().timed_pop_filtered(timeout, types | Gst.MessageType.ERROR)
    if msg and msg.type == Gst.MessageType.ERROR:
        err, dbg = msg.parse_error()
        raise RuntimeError("%s (%s)" % (err.message, dbg))
    return msg


def straight_decode(path):
    p = Gst.parse_launch(
        "filesrc location=%s ! c63parse ! c63dec ! appsink name=out sync=false" % path)
    out = p.get_by_name("out")
    p.set_state(Gst.State.PLAYING)
    pictures = []
    while True:
        s = out.emit("try-pull-sample", TIMEOUT)
        if s is None:
            break
        pictures.append(digest(s)[1])
    p.set_state(Gst.State.NULL)
    return pictures


class Player:
    """filesrc ! decodebin ! appsink: what the issue's player ran."""

    def __init__(self, stream):
        self.stream = stream
        self.pipeline = Gst.parse_launch(
            "filesrc location=%s ! decodebin ! appsink name=out sync=false" % stream.path)
        self.out = self.pipeline.get_by_name("out")
        self.pipeline.set_state(Gst.State.PAUSED)
        self.pipeline.get_state(TIMEOUT)

    def close(self):
        self.pipeline.set_state(Gst.State.NULL)

    def elements(self):
        return [e.get_factory().get_name() for e in iterate(self.pipeline) if e.get_factory()]

    def seek(self, rate, flags, start, stop=-1):
        self.pipeline.set_state(Gst.State.PAUSED)
        self.pipeline.get_state(TIMEOUT)
        stop_type = Gst.SeekType.NONE if stop < 0 else Gst.SeekType.SET
        ok = self.pipeline.seek(rate, Gst.Format.TIME, Gst.SeekFlags.FLUSH | flags,
                                Gst.SeekType.SET, start, stop_type, stop)
        self.pipeline.get_state(TIMEOUT)
        return ok

    def preroll(self):
        """The picture shown in PAUSED."""
        s = self.out.get_property("last-sample")
        return digest(s) if s else None

    def step(self):
        """One picture on in PAUSED (a step event), the picture shown then."""
        bus = self.pipeline.get_bus()
        bus.set_flushing(True)
        bus.set_flushing(False)
        self.pipeline.send_event(Gst.Event.new_step(Gst.Format.BUFFERS, 1, 1.0, True, False))
        wait(self.pipeline, Gst.MessageType.STEP_DONE, 5 * Gst.SECOND)
        self.pipeline.get_state(TIMEOUT)
        return self.preroll()

    def play(self, flush_bus=True):
        """Every picture until EOS (or SEGMENT_DONE) as (pts, digest). The
        bus's old messages are dropped first, unless flush_bus is False:
        a message may come before PLAYING (a decoder that pushes from a
        thread of its own lets its parser run ahead)."""
        if flush_bus:
            self.pipeline.get_bus().set_flushing(True)
            self.pipeline.get_bus().set_flushing(False)
        self.pipeline.set_state(Gst.State.PLAYING)
        got = []
        while True:
            s = self.out.emit("try-pull-sample", 2 * Gst.SECOND)
            if s is None:
                break
            got.append(digest(s))
        return got


def iterate(bin_):
    it = bin_.iterate_recurse()
    result = []
    while True:
        r, e = it.next()
        if r != Gst.IteratorResult.OK:
            return result
        result.append(e)


def check_pictures(stream, got, first, last, what, start=0):
    """got is frames first..last (step -1 when last < first), pixels right.
    A picture that begins before the segment's start is clipped to it."""
    step = 1 if first is None or last >= first else -1
    want = list(range(first, last + step, step)) if first is not None else []
    times = [pts for pts, _ in got]
    if not check(times == [max(frame_time(n), start) for n in want],
                 "%s: %s: pictures at %s, want frames %s" % (
                     stream.name, what, [t / Gst.SECOND for t in times[:8]], want[:8])):
        return
    for (pts, d), n in zip(got, want):
        if not check(d == stream.pictures[n], "%s: %s: frame %d's pixels differ from a straight "
                     "decode" % (stream.name, what, n)):
            return


SNAPS = {
    "KEY_UNIT": Gst.SeekFlags.KEY_UNIT,
    "KEY_UNIT|SNAP_BEFORE": Gst.SeekFlags.KEY_UNIT | Gst.SeekFlags.SNAP_BEFORE,
    "KEY_UNIT|SNAP_AFTER": Gst.SeekFlags.KEY_UNIT | Gst.SeekFlags.SNAP_AFTER,
    "KEY_UNIT|SNAP_NEAREST": Gst.SeekFlags.KEY_UNIT | Gst.SeekFlags.SNAP_NEAREST,
    "ACCURATE": Gst.SeekFlags.ACCURATE,
    "none": Gst.SeekFlags.NONE,
}


def expected_first(stream, flags, t):
    """The frame the first picture after a seek to t must be (None: none)."""
    if t >= frame_time(stream.frames):
        return None
    n = t // FRAME
    if not flags & Gst.SeekFlags.KEY_UNIT:
        return n
    before = stream.key_before(n)
    after = stream.key_after(n if frame_time(n) == t else n + 1)
    if after is None:
        return before
    snap_before = bool(flags & Gst.SeekFlags.SNAP_BEFORE)
    snap_after = bool(flags & Gst.SeekFlags.SNAP_AFTER)
    if snap_before and snap_after:
        return before if t - frame_time(before) <= frame_time(after) - t else after
    return after if snap_after else before


def positions(stream):
    """About 20 seek targets: 0, the last frame, on keyframes and the frames
    just before and after them, between frames, past the end."""
    last = stream.frames - 1
    ts = {0, frame_time(last), frame_time(stream.frames) + FRAME, frame_time(last) + FRAME // 2,
          frame_time(stream.frames // 2), frame_time(stream.frames // 2) + FRAME // 3, FRAME // 2}
    for k in [k for k in stream.keyframes if k > 0][:5]:
        ts.update(frame_time(n) for n in (k - 1, k, k + 1) if 0 <= n <= last)
        ts.add(frame_time(k) - 1)
    ts.update(frame_time(n * stream.frames // 7) + FRAME // 4 for n in range(1, 7))
    return sorted(ts)[:24]


def test_duration(stream):
    p = Player(stream)
    ok, d = p.pipeline.query_duration(Gst.Format.TIME)
    check(ok and d == frame_time(stream.frames),
          "%s: duration in PAUSED %s, want %d frames = %d" % (
              stream.name, d if ok else None, stream.frames, frame_time(stream.frames)))
    check("c63parse" in p.elements(), "%s: decodebin did not plug c63parse: %s" % (
        stream.name, p.elements()))
    p.close()


def test_seeks(stream):
    p = Player(stream)
    for t in positions(stream):
        for name, flags in SNAPS.items():
            what = "seek to %.4f s %s" % (t / Gst.SECOND, name)
            check(p.seek(1.0, flags, t), "%s: %s refused" % (stream.name, what))
            first = expected_first(stream, flags, t)
            check_pictures(stream, p.play(), first, stream.frames - 1 if first is not None
                           else None, what, 0 if flags & Gst.SeekFlags.KEY_UNIT else t)
    p.close()


def test_segment_seek(stream):
    p = Player(stream)
    n0, n1 = stream.frames // 2, stream.frames // 2 + 5
    bus = p.pipeline.get_bus()
    check(p.seek(1.0, Gst.SeekFlags.ACCURATE | Gst.SeekFlags.SEGMENT,
                 frame_time(n0), frame_time(n1)), "%s: segment seek refused" % stream.name)
    got = p.play(flush_bus=False)
    check_pictures(stream, got, n0, n1 - 1, "accurate segment seek")
    msg = wait(p.pipeline, Gst.MessageType.SEGMENT_DONE, 5 * Gst.SECOND)
    check(msg is not None, "%s: no SEGMENT_DONE after a segment seek" % stream.name)
    bus.set_flushing(True)
    p.close()


def test_reverse(stream):
    p = Player(stream)
    check(p.seek(-1.0, Gst.SeekFlags.NONE, 0), "%s: reverse seek refused" % stream.name)
    check_pictures(stream, p.play(), stream.frames - 1, 0, "reverse playback")
    # From the middle back to the start.
    # From past the end: nothing (and no critical warning from the segment).
    check(p.seek(-1.0, Gst.SeekFlags.NONE, frame_time(stream.frames) + FRAME),
          "%s: reverse seek past the end refused" % stream.name)
    check_pictures(stream, p.play(), None, None, "reverse playback from past the end")
    mid = stream.frames // 2
    check(p.seek(-1.0, Gst.SeekFlags.ACCURATE, 0, frame_time(mid)), "reverse seek refused")
    check_pictures(stream, p.play(), mid - 1, 0, "reverse playback from the middle")
    p.close()


def test_scrub(stream):
    p = Player(stream)
    targets = [frame_time(stream.frames * i // 10) + (FRAME // 3 if i % 2 else 0)
               for i in (3, 7, 1, 9, 5, 0, 8, 2, 6, 4)]
    for i, t in enumerate(targets):
        flags = Gst.SeekFlags.ACCURATE if i % 2 == 0 else Gst.SeekFlags.KEY_UNIT
        p.seek(1.0, flags, t)
        got = p.preroll()
        n = expected_first(stream, flags, t)
        want_t = frame_time(n) if flags & Gst.SeekFlags.KEY_UNIT else max(t, frame_time(n))
        check(got is not None and got == (want_t, stream.pictures[n]),
              "%s: scrub to %.3f s prerolled %s, want frame %d" % (
                  stream.name, t / Gst.SECOND, got and got[0], n))
    # Frame stepping forward in PAUSED, one picture at a time.
    p.seek(1.0, Gst.SeekFlags.ACCURATE, frame_time(2))
    for n in (3, 4, 5):
        got = p.step()
        check(got == (frame_time(n), stream.pictures[n]),
              "%s: step to frame %d prerolled %s" % (stream.name, n, got and got[0]))
    # Backwards: a reverse seek, then steps.
    p.seek(-1.0, Gst.SeekFlags.ACCURATE, 0, frame_time(9))
    check(p.preroll() == (frame_time(8), stream.pictures[8]), "%s: reverse preroll" % stream.name)
    for n in (7, 6):
        got = p.step()
        check(got == (frame_time(n), stream.pictures[n]),
              "%s: step back to frame %d prerolled %s" % (stream.name, n, got and got[0]))
    p.close()


def test_keyframe_exact(stream):
    """A key-unit seek exactly on a keyframe's time starts at that keyframe."""
    p = Player(stream)
    for k in [k for k in stream.keyframes if k > 0][:3]:
        p.seek(1.0, Gst.SeekFlags.KEY_UNIT, frame_time(k))
        got = p.play()
        check(got and got[0][0] == frame_time(k), "%s: key-unit seek on keyframe %d starts at "
              "%s" % (stream.name, k, got and got[0][0]))
    p.close()


def test_snap_nearest(stream):
    """Keyframes every 0.4 s: a key-unit seek to 5.5 s with SNAP_NEAREST
    starts at 5.6 s, with SNAP_BEFORE at 5.2 s, with SNAP_AFTER at 5.6 s;
    to 5.4 s, as far from both, SNAP_NEAREST takes the one before."""
    p = Player(stream)
    for name, target, want in (("KEY_UNIT|SNAP_NEAREST", 5500, 5600),
                               ("KEY_UNIT|SNAP_BEFORE", 5500, 5200),
                               ("KEY_UNIT|SNAP_AFTER", 5500, 5600),
                               ("KEY_UNIT|SNAP_NEAREST", 5400, 5200)):
        p.seek(1.0, SNAPS[name], target * Gst.MSECOND)
        got = p.play()
        check(got and got[0][0] == want * Gst.MSECOND, "%s: seek to %.1f s %s starts at %s" % (
            stream.name, target / 1000, name, got and got[0][0]))
    p.close()


def test_decoder_alone(stream):
    """filesrc ! c63dec (no parser) refuses a seek and says to use c63parse."""
    pipeline = Gst.parse_launch("filesrc location=%s ! c63dec ! fakesink" % stream.path)
    pipeline.set_state(Gst.State.PAUSED)
    pipeline.get_state(TIMEOUT)
    ok = pipeline.seek_simple(Gst.Format.TIME, Gst.SeekFlags.FLUSH, frame_time(5))
    msg = wait(pipeline, Gst.MessageType.WARNING, Gst.SECOND)
    check(not ok and msg is not None and "c63parse" in msg.parse_warning()[0].message,
          "filesrc ! c63dec: seek %s, warning %s" % (ok, msg and msg.parse_warning()[0].message))
    pipeline.set_state(Gst.State.NULL)


# ---- gst-validate-like scenarios through playbin (fakesink video sink) ----

class PlaybinRun:
    def __init__(self, stream):
        self.stream = stream
        self.pipeline = Gst.ElementFactory.make("playbin")
        self.pipeline.set_property("uri", Gst.filename_to_uri(stream.path))
        sink = Gst.ElementFactory.make("fakesink")
        sink.set_property("sync", False)
        sink.set_property("signal-handoffs", True)
        sink.connect("handoff", self.on_handoff)
        self.pipeline.set_property("video-sink", sink)
        self.pipeline.set_property("audio-sink", Gst.ElementFactory.make("fakesink"))
        self.seen = []

    def on_handoff(self, sink, buf, pad):
        self.seen.append(buf.pts)

    def state(self, s):
        self.pipeline.set_state(s)
        r = self.pipeline.get_state(TIMEOUT)[0]
        check(r != Gst.StateChangeReturn.FAILURE, "%s: playbin to %s failed" % (
            self.stream.name, s.value_nick))

    def seek(self, rate, flags, start, stop=-1):
        self.seen = []
        stop_type = Gst.SeekType.NONE if stop < 0 else Gst.SeekType.SET
        return self.pipeline.seek(rate, Gst.Format.TIME, Gst.SeekFlags.FLUSH | flags,
                                  Gst.SeekType.SET, start, stop_type, stop)

    def run_to_eos(self):
        self.state(Gst.State.PLAYING)
        msg = wait(self.pipeline, Gst.MessageType.EOS)
        check(msg is not None, "%s: playbin never reached EOS" % self.stream.name)

    def close(self):
        self.pipeline.set_state(Gst.State.NULL)


def scenario_seek(stream, forward):
    run = PlaybinRun(stream)
    run.state(Gst.State.PAUSED)
    check("c63parse" in [e.get_factory().get_name() for e in iterate(run.pipeline)
                         if e.get_factory()], "%s: playbin did not plug c63parse" % stream.name)
    n = stream.frames
    targets = [n * i // 5 for i in range(1, 5)]
    for k in (targets if forward else list(reversed(targets))):
        run.state(Gst.State.PAUSED)
        check(run.seek(1.0, Gst.SeekFlags.ACCURATE, frame_time(k)), "seek refused")
        run.run_to_eos()
        check(run.seen == [frame_time(i) for i in range(k, n)],
              "%s: playbin seek_%s to frame %d gave %d pictures from %s" % (
                  stream.name, "forward" if forward else "backward", k, len(run.seen),
                  run.seen[:1]))
    run.close()


def scenario_scrub_forward(stream):
    run = PlaybinRun(stream)
    run.state(Gst.State.PAUSED)
    for k in range(0, stream.frames, max(1, stream.frames // 12)):
        run.seek(1.0, Gst.SeekFlags.ACCURATE, frame_time(k))
        run.state(Gst.State.PAUSED)
        shown = run.pipeline.get_property("video-sink").get_property("last-sample")
        check(shown and shown.get_buffer().pts == frame_time(k),
              "%s: scrub to frame %d prerolled %s" % (
                  stream.name, k, shown and shown.get_buffer().pts))
    run.close()


def scenario_reverse(stream):
    run = PlaybinRun(stream)
    run.state(Gst.State.PAUSED)
    check(run.seek(-1.0, Gst.SeekFlags.NONE, 0), "reverse seek refused")
    run.run_to_eos()
    check(run.seen == [frame_time(i) for i in reversed(range(stream.frames))],
          "%s: playbin reverse_playback gave %d pictures from %s" % (
              stream.name, len(run.seen), run.seen[:1]))
    run.close()


def scenario_play(stream, seconds):
    run = PlaybinRun(stream)
    run.run_to_eos()
    ok, pos = run.pipeline.query_position(Gst.Format.TIME)
    check(len(run.seen) == stream.frames and run.seen[-1] >= seconds * Gst.SECOND,
          "%s: play_15s showed %d of %d pictures" % (stream.name, len(run.seen), stream.frames))
    check(ok and pos >= seconds * Gst.SECOND, "%s: play_15s ended at position %s" % (
        stream.name, pos if ok else None))
    run.close()


def scenario_change_state_intensive(stream):
    run = PlaybinRun(stream)
    for _ in range(8):
        for s in (Gst.State.READY, Gst.State.PAUSED, Gst.State.PLAYING, Gst.State.PAUSED,
                  Gst.State.READY, Gst.State.NULL):
            run.pipeline.set_state(s)
        run.pipeline.get_state(TIMEOUT)
    run.seen = []
    run.run_to_eos()
    check(run.seen == [frame_time(i) for i in range(stream.frames)],
          "%s: after state changes, %d of %d pictures" % (stream.name, len(run.seen),
                                                          stream.frames))
    run.close()


def generate(tmp, synth, enc, name, frames, keyint, w=64, h=48):
    yuv, out = os.path.join(tmp, name + ".yuv"), os.path.join(tmp, name + ".c63")
    subprocess.run([synth, "-w", str(w), "-h", str(h), "-f", str(frames), yuv], check=True)
    subprocess.run([enc, "-w", str(w), "-h", str(h), "-k", str(keyint), "--quiet", "-o", out,
                    yuv], check=True)
    return out


def every(k):
    return lambda n: list(range(0, n, k)) if k else [0]


def main():
    synth, enc, conformance = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        streams = [
            Stream("pan_352x288", os.path.join(conformance, "pan_352x288.c63"), every(0)),
            Stream("pan_352x288_q10k7", os.path.join(conformance, "pan_352x288_q10k7.c63"),
                   every(7)),
        ]
        for k in (0, 1, 7, 25):
            streams.append(Stream("gen_k%d" % k, generate(tmp, synth, enc, "k%d" % k, 100, k),
                                  every(k)))
        for s in streams:
            check(s.frames > 0, "%s: the straight decode gave nothing" % s.name)
            print("%s: %d frames, keyframes %s" % (s.name, s.frames, s.keyframes[:6]),
                  flush=True)
            test_duration(s)
            test_seeks(s)
            test_segment_seek(s)
            test_reverse(s)
            test_scrub(s)
            test_keyframe_exact(s)
        test_decoder_alone(streams[0])
        test_snap_nearest(Stream("gen_k10", generate(tmp, synth, enc, "k10", 150, 10, 32, 32),
                                 every(10)))
        k7 = streams[-2]
        scenario_seek(k7, True)
        scenario_seek(k7, False)
        scenario_scrub_forward(k7)
        scenario_reverse(k7)
        scenario_change_state_intensive(streams[1])
        long_clip = Stream("gen_16s", generate(tmp, synth, enc, "long", 16 * FPS, 25, 32, 32),
                           every(25))
        scenario_play(long_clip, 15)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
