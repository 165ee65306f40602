"""c63-farm: encode and decode one Codec63 job on many workers with Dask.

The driver (this package) plans the job, hands chunks to Dask workers
(c63farm.tasks, run there with the c63-enc and c63-dec tools) and joins
their results into one file. See docs/farm.md.
SPDX-License-Identifier: LGPL-2.1-or-later
"""

import sys

PROG = "c63-farm"
# The libc63 built or installed with the program (set by c63-farm itself).
LIBC63 = None
# The workers' chunk encoder (tools/farm_worker.h), built or installed with it.
FARM_WORKER = None

# Exit statuses, as c63-enc and c63-dec.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2


class FarmError(Exception):
    """An error the user can act on: printed as one line, exit status 1."""


class UsageError(Exception):
    """A bad argument: printed with a pointer to --help, exit status 2."""


def note(opts, text):
    """A line on standard error, unless --quiet."""
    if not opts.quiet:
        sys.stderr.write("%s: %s\n" % (PROG, text))
