#!/usr/bin/env python3
"""Embedding the c63 elements in a Python application (PyGObject).

Encodes 50 frames of videotestsrc with c63enc (c63cudaenc on a GPU gives the
same bytes), decodes them with c63dec, and takes the pictures out through an
appsink, as an application would. Run with the plugin on GST_PLUGIN_PATH:

    GST_PLUGIN_PATH=build/gst python3 examples/pipeline.py

Exits with 0 when all 50 pictures came out at 320x240 and the pipeline
ended cleanly.
SPDX-License-Identifier: LGPL-2.1-or-later"""
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

FRAMES = 50


def main():
    Gst.init(None)
    if Gst.ElementFactory.find("c63enc") is None:
        print("the c63 plugin is not found: set GST_PLUGIN_PATH", file=sys.stderr)
        return 1
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={FRAMES} pattern=ball "
        "! video/x-raw,format=I420,width=320,height=240,framerate=25/1 "
        "! c63enc quality=25 keyframe-interval=25 ! c63dec "
        "! appsink name=sink emit-signals=false sync=false")
    sink = pipeline.get_by_name("sink")
    pipeline.set_state(Gst.State.PLAYING)
    pictures = 0
    while True:
        sample = sink.emit("pull-sample")  # None at EOS
        if sample is None:
            break
        s = sample.get_caps().get_structure(0)
        if (s.get_value("width"), s.get_value("height")) != (320, 240):
            print("unexpected caps", sample.get_caps().to_string(), file=sys.stderr)
            return 1
        pictures += 1
    msg = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    if msg is not None:
        err, dbg = msg.parse_error()
        print(f"error: {err.message} ({dbg})", file=sys.stderr)
        return 1
    print(f"{pictures} of {FRAMES} pictures decoded")
    return 0 if pictures == FRAMES else 1


if __name__ == "__main__":
    sys.exit(main())
