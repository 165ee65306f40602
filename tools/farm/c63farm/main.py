"""c63-farm's entry point: commands, messages and exit statuses.
SPDX-License-Identifier: LGPL-2.1-or-later
"""
import sys

from . import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PROG, FarmError, UsageError, options


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        command, opts = options.parse(argv)
        if opts is None:
            return EXIT_OK
        if command == "encode":
            from .encode import encode
            return encode(opts) or EXIT_OK
        from .decode import decode
        return decode(opts)
    except UsageError as e:
        sys.stderr.write("%s: %s (see %s %s--help)\n" % (
            PROG, e, PROG, (argv[0] + " ") if argv and argv[0] in ("encode", "decode") else ""))
        return EXIT_USAGE
    except FarmError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted; finished chunks are kept for the next run\n" % PROG)
        return EXIT_ERROR
