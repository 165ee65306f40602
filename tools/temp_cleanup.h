/* Temporary output files removed when a signal ends the program.
 *
 * The tools write a regular output under a hidden temporary name and rename
 * it at the end (cliutil.h, cli_output). SIGINT, SIGTERM, SIGHUP, SIGPIPE
 * and SIGXFSZ (the file size limit, ulimit -f) end the program by default
 * and would leave that temporary behind, often large (c63-dec's writers
 * grow it ahead of the pictures). The handler installed here removes every
 * temporary still registered, says so for SIGXFSZ, and ends the program
 * by the same signal, with its default action. Signals that were ignored
 * when the program started (nohup, trap '' XFSZ) stay ignored.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_TEMP_CLEANUP_H
#define CLI_TEMP_CLEANUP_H

/* Create a temporary file from template (mkstemp's XXXXXX at its end),
 * registered for removal: no signal can come between its creation and its
 * registration. prog and output name the program and the output the file
 * stands for, in the SIGXFSZ message. Returns the open descriptor and a
 * registration in *slot, or -1 with errno set. */
int temp_cleanup_create(char *template_path, const char *prog, const char *output, int *slot);

/* The temporary of slot was renamed or removed: forget it. */
void temp_cleanup_forget(int slot);

#endif
