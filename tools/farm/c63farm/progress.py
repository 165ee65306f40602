"""Progress on standard error: frames done, frames per second, time left.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import sys
import time

from . import PROG

INTERVAL = 0.5  # seconds between two lines when standard error is no terminal


class Progress:
    def __init__(self, total, done, enabled, what):
        self.total, self.done, self.what = total, done, what
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.start_done = done
        self.shown = 0.0

    def add(self, frames):
        self.done += frames
        now = time.monotonic()
        if self.enabled and (self.tty or now - self.shown >= INTERVAL or self.done == self.total):
            self.shown = now
            self._show(now)

    def fps(self):
        elapsed = time.monotonic() - self.start
        return (self.done - self.start_done) / elapsed if elapsed > 0 else 0.0

    def _show(self, now):
        fps = self.fps()
        left = (self.total - self.done) / fps if fps > 0 else 0
        line = "%s: %s %d/%d frames (%d%%), %.1f fps, %d:%02d left" % (
            PROG, self.what, self.done, self.total, 100 * self.done // max(1, self.total), fps,
            left // 60, left % 60)
        sys.stderr.write(("\r%s\033[K" if self.tty else "%s\n") % line)
        sys.stderr.flush()

    def finish(self):
        if self.enabled and self.tty:
            sys.stderr.write("\n")
