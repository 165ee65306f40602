#!/bin/sh
# Runs examples/pipeline.py (the PyGObject embedding example) with the first
# Python that has PyGObject (python3-gi); without one it skips and says so.
#   test_python_example.sh EXAMPLE
for py in python3 /usr/bin/python3; do
  if "$py" -c 'import gi; gi.require_version("Gst", "1.0")' 2> /dev/null; then
    exec "$py" "$1"
  fi
done
echo "SKIP: no Python with PyGObject and GStreamer's introspection data" \
  "(apt-get install python3-gi gir1.2-gstreamer-1.0)"
exit 77
