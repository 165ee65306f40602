/* Temporary output files removed when a signal ends the program
 * (temp_cleanup.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "temp_cleanup.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A tool writes one output; a few slots leave room. */
#define MAX_TEMPS 4

/* The handler reads only these: static storage that is never freed, a
 * name complete before its slot is marked used (atomic, lock-free, so safe
 * to read in a handler). */
typedef struct temp_slot {
  atomic_int used;
  char path[PATH_MAX];
  char output[PATH_MAX]; /* the output's name, for the SIGXFSZ message */
} temp_slot;

static temp_slot slots[MAX_TEMPS];
static const char *program = "";
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ};
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

#define N_FATAL ((int)(sizeof fatal_signals / sizeof fatal_signals[0]))

/* write(2) all of s; strlen and write are async-signal-safe. */
static void say(const char *s)
{
  size_t n = strlen(s);
  while (n > 0) {
    const ssize_t w = write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= (size_t)w;
  }
}

static void on_fatal_signal(int sig)
{
  int named = 0;
  for (int i = 0; i < MAX_TEMPS; i++) {
    if (!atomic_load(&slots[i].used)) continue;
    unlink(slots[i].path);
    if (sig == SIGXFSZ) {
      say(program);
      say(": writing ");
      say(slots[i].output);
      say(": the file size limit (ulimit -f) was reached; the output was not written\n");
      named = 1;
    }
  }
  if (sig == SIGXFSZ && !named) {
    say(program);
    say(": the file size limit (ulimit -f) was reached\n");
  }
  /* End by the signal itself, so that the parent sees what ended us. It
   * is blocked while this handler runs and arrives as it returns. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
  raise(sig);
}

static void fatal_set(sigset_t *set)
{
  sigemptyset(set);
  for (int i = 0; i < N_FATAL; i++)
    sigaddset(set, fatal_signals[i]);
}

static void install_handlers(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_fatal_signal;
  fatal_set(&sa.sa_mask); /* one handler at a time */
  for (int i = 0; i < N_FATAL; i++) {
    struct sigaction old;
    if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
    sigaction(fatal_signals[i], &sa, NULL);
  }
}

int temp_cleanup_create(char *template_path, const char *prog, const char *output, int *slot)
{
  sigset_t fatal, old;
  int free_slot = -1;

  pthread_once(&install_once, install_handlers);
  *slot = -1;
  /* Blocked, a signal waits until the file is registered (signals meant
   * for the process go to a thread that has them unblocked: the tools
   * create their temporary before any other thread starts). */
  fatal_set(&fatal);
  pthread_sigmask(SIG_BLOCK, &fatal, &old);
  for (int i = 0; i < MAX_TEMPS && free_slot < 0; i++)
    if (!atomic_load(&slots[i].used)) free_slot = i;
  const int fd = mkstemp(template_path);
  const int err = errno;
  if (fd >= 0 && free_slot >= 0 && strlen(template_path) < PATH_MAX) {
    temp_slot *s = &slots[free_slot];
    strcpy(s->path, template_path);
    snprintf(s->output, sizeof s->output, "%s", output);
    program = prog;
    atomic_store(&s->used, 1);
    *slot = free_slot;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = err;
  return fd;
}

void temp_cleanup_forget(int slot)
{
  if (slot >= 0 && slot < MAX_TEMPS) atomic_store(&slots[slot].used, 0);
}
