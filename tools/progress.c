/* The status line of a long run (progress.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "cliutil.h"

/* Seconds between two redraws: often enough to look alive, seldom enough
 * to cost nothing and stay readable. */
#define REDRAW_INTERVAL 0.25

/* Erase the rest of the line (ANSI EL), for a line shorter than the last. */
#define ERASE_LINE_END "\033[K"

void cli_progress_start(cli_progress *p, const char *prog, int quiet, long total, int fps_num,
                        int fps_den)
{
  p->prog = prog;
  p->enabled = !quiet && isatty(STDERR_FILENO);
  p->total = total;
  p->fps_num = fps_num;
  p->fps_den = fps_den;
  p->start = cli_now();
  p->next_draw = p->start; /* the first frame draws it */
  p->shown = 0;
}

void cli_progress_set_total(cli_progress *p, long total)
{
  p->total = total;
}

/* "H:MM:SS" of a duration in seconds. */
static void format_duration(char *buf, size_t size, double seconds)
{
  const long s = (long)(seconds + 0.5);
  snprintf(buf, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

static void draw(cli_progress *p, long frames, uint64_t bytes, double now)
{
  const double elapsed = now - p->start;
  const double fps = elapsed > 0 ? (double)frames / elapsed : 0.0;
  /* the bitrate the stream has when played at its frame rate */
  const double kbps = frames > 0 && p->fps_den > 0
                          ? 8.0 * (double)bytes * p->fps_num / p->fps_den / (double)frames / 1000.0
                          : 0.0;
  char done[64], left[64] = "";

  if (p->total > 0)
    snprintf(done, sizeof done, "%ld/%ld frames (%d%%)", frames, p->total,
             frames >= p->total ? 100 : (int)(100.0 * (double)frames / (double)p->total));
  else
    snprintf(done, sizeof done, "%ld frames", frames);
  if (p->total > frames && fps > 0) {
    char eta[40];
    format_duration(eta, sizeof eta, (double)(p->total - frames) / fps);
    snprintf(left, sizeof left, ", %s left", eta);
  }
  fprintf(stderr, "\r%s: %s, %.1f fps, %.1f kbit/s%s" ERASE_LINE_END, p->prog, done, fps, kbps,
          left);
  fflush(stderr);
  p->shown = 1;
}

void cli_progress_update(cli_progress *p, long frames, uint64_t bytes)
{
  if (!p->enabled) return;
  const double now = cli_now();
  if (now < p->next_draw) return;
  p->next_draw = now + REDRAW_INTERVAL;
  draw(p, frames, bytes, now);
}

void cli_progress_hide(cli_progress *p)
{
  if (!p->enabled || !p->shown) return;
  fputs("\r" ERASE_LINE_END, stderr);
  fflush(stderr);
  p->shown = 0;
}

void cli_progress_finish(cli_progress *p, long frames, uint64_t bytes)
{
  if (!p->enabled) return;
  draw(p, frames, bytes, cli_now());
  fputc('\n', stderr);
  p->shown = 0;
  p->enabled = 0;
}
