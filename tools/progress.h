/* The status line of a long run, as ffmpeg and x264 keep one: on a
 * terminal, one line on standard error kept up to date with the frames done
 * (of the total when known), the speed, the bitrate so far and the time
 * left. Nothing is printed when standard error is not a terminal (a log, a
 * pipe) or the user asked for quiet.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <stdint.h>

typedef struct cli_progress {
  const char *prog;
  int enabled;
  long total;           /* frames; <= 0: unknown */
  int fps_num, fps_den; /* the stream's frame rate, for the bitrate */
  double start, next_draw;
  int shown; /* a status line is on the screen */
} cli_progress;

/* Start the clock. The line is enabled only when quiet is 0 and standard
 * error is a terminal; total (frames, <= 0 when unknown) may be set later
 * with cli_progress_set_total. */
void cli_progress_start(cli_progress *p, const char *prog, int quiet, long total, int fps_num,
                        int fps_den);
void cli_progress_set_total(cli_progress *p, long total);

/* frames done and bytes of stream so far: redraws the line when it is due
 * (a few times a second), so it may be called for every frame. */
void cli_progress_update(cli_progress *p, long frames, uint64_t bytes);

/* Erase the line before another message goes to standard error; the next
 * update draws it again. */
void cli_progress_hide(cli_progress *p);

/* Draw the final figures and end the line. */
void cli_progress_finish(cli_progress *p, long frames, uint64_t bytes);

#endif
