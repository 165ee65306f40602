/* Regular output files written through shared mappings (mapped_output.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "mapped_output.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The file grows ahead of the pictures by this much at a time (sparse:
 * ftruncate allocates nothing), so most puts find room without the lock. */
#define GROW_STEP ((uint64_t)256 << 20)

/* Pictures are copied through windows of the file mapped once each and
 * unmapped when full, rather than a mapping per picture: each munmap
 * interrupts every core the process runs on (to flush their TLBs). */
#define WINDOW ((uint64_t)32 << 20)

typedef struct window {
  struct window *next;
  uint64_t start; /* file offset, a multiple of WINDOW */
  uint8_t *map;
  uint64_t filled; /* bytes put into it so far */
} window;

struct mapped_output {
  int fd;
  long page;
  pthread_mutex_t lock;
  uint64_t size;     /* the file's size now */
  uint64_t max_size; /* the file size limit (ulimit -f) */
  int fixed;         /* mapped_output_open: the size is the file's, for good */
  window *live;      /* mapped windows not yet full */
};

/* SIGBUS while a thread copies into a mapping: that copy fails. Any other
 * SIGBUS keeps the disposition it had before. Volatile: memcpy does not
 * read it, so the compiler would otherwise drop the store before the copy. */
static _Thread_local sigjmp_buf *volatile copy_guard;
static struct sigaction old_sigbus;
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static int handler_users;

static void on_sigbus(int sig, siginfo_t *info, void *ctx)
{
  (void)info;
  (void)ctx;
  if (copy_guard) siglongjmp(*copy_guard, 1);
  /* Not ours: put the old action back; the faulting instruction runs again
   * and meets it. */
  sigaction(sig, &old_sigbus, NULL);
}

static void hold_handler(void)
{
  pthread_mutex_lock(&handler_lock);
  if (handler_users++ == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &old_sigbus);
  }
  pthread_mutex_unlock(&handler_lock);
}

static void release_handler(void)
{
  pthread_mutex_lock(&handler_lock);
  if (--handler_users == 0) sigaction(SIGBUS, &old_sigbus, NULL);
  pthread_mutex_unlock(&handler_lock);
}

/* fd's writer, fd a regular file of size bytes (checked by the caller). */
static mapped_output *writer(int fd, uint64_t size, int fixed)
{
  /* A mapping for writing needs the file open for reading too. */
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) != O_RDWR) return NULL;
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) page = 4096;
  /* A file system without shared writable mappings (ENODEV) is written
   * with write() instead. */
  void *probe = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (probe == MAP_FAILED) return NULL;
  munmap(probe, (size_t)page);
  mapped_output *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->fd = fd;
  m->page = page;
  m->size = size;
  m->fixed = fixed;
  struct rlimit fsize;
  m->max_size = UINT64_MAX;
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY)
    m->max_size = (uint64_t)fsize.rlim_cur;
  pthread_mutex_init(&m->lock, NULL);
  hold_handler();
  return m;
}

mapped_output *mapped_output_new(int fd)
{
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) return NULL;
  return writer(fd, 0, 0);
}

mapped_output *mapped_output_open(int fd)
{
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return NULL;
  return writer(fd, (uint64_t)st.st_size, 1);
}

/* The copy itself, which a SIGBUS abandons. Kept out of line so that
 * nothing of the caller's lives in registers across the jump. */
static __attribute__((noinline)) int guarded_copy(uint8_t *dst, const void *src, size_t n)
{
  sigjmp_buf env;
  if (sigsetjmp(env, 1) != 0) {
    copy_guard = NULL;
    return -1;
  }
  copy_guard = &env;
  memcpy(dst, src, n);
  copy_guard = NULL;
  return 0;
}

/* Grow the file to hold end bytes, well ahead, but not past the file size
 * limit: growing past it raises SIGXFSZ, which would end a run whose
 * pictures fit. 0 or an errno value. */
static int grow(mapped_output *m, uint64_t end)
{
  int err = 0;
  pthread_mutex_lock(&m->lock);
  if (m->fixed && m->size < end) {
    err = EFBIG;
  } else if (m->size < end) {
    uint64_t want = end + GROW_STEP;
    if (want > m->max_size) want = m->max_size > end ? m->max_size : end;
    if (ftruncate(m->fd, (off_t)want) == 0)
      m->size = want;
    else if (ftruncate(m->fd, (off_t)end) == 0) /* near a size limit */
      m->size = end;
    else
      err = errno;
  }
  pthread_mutex_unlock(&m->lock);
  return err;
}

/* The live window starting at start, mapped when first asked for; NULL
 * when it cannot be mapped (a small address-space limit). Lock held. */
static window *get_window(mapped_output *m, uint64_t start)
{
  for (window *w = m->live; w; w = w->next)
    if (w->start == start) return w;
  window *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->map = mmap(NULL, WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, (off_t)start);
  if (w->map == MAP_FAILED) {
    free(w);
    return NULL;
  }
  w->start = start;
  w->next = m->live;
  m->live = w;
  return w;
}

static void drop_window(window *w)
{
  munmap(w->map, WINDOW);
  free(w);
}

/* Copy into dst, the mapping of file bytes [off, off + n). On SIGBUS ask
 * the file system for the range, which gives the reason (ENOSPC, EIO...);
 * should it now have room (another file was removed meanwhile), the pages
 * are there: copy again. */
static int copy_in(mapped_output *m, uint8_t *dst, uint64_t off, const uint8_t *src, size_t n)
{
  if (guarded_copy(dst, src, n) == 0) return 0;
  int err = posix_fallocate(m->fd, (off_t)off, (off_t)n);
  if (err == 0 && guarded_copy(dst, src, n) != 0) err = EIO;
  return err;
}

/* Put [off, off + n), which lies within one window, through that window,
 * or through a mapping of its own where no window can be had. */
static int put_piece(mapped_output *m, uint64_t off, const uint8_t *data, size_t n)
{
  const uint64_t start = off - off % WINDOW;
  pthread_mutex_lock(&m->lock);
  window *w = get_window(m, start);
  pthread_mutex_unlock(&m->lock);
  if (!w) {
    const uint64_t base = off - off % (uint64_t)m->page;
    const size_t len = (size_t)(off + n - base);
    uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, (off_t)base);
    if (map == MAP_FAILED) return errno;
    const int err = copy_in(m, map + (off - base), off, data, n);
    munmap(map, len);
    return err;
  }
  const int err = copy_in(m, w->map + (off - start), off, data, n);
  /* Each byte is put once: a window filled to its end is done with. */
  pthread_mutex_lock(&m->lock);
  w->filled += n;
  const int full = w->filled == WINDOW;
  if (full) {
    window **p = &m->live;
    while (*p != w)
      p = &(*p)->next;
    *p = w->next;
  }
  pthread_mutex_unlock(&m->lock);
  if (full) drop_window(w);
  return err;
}

int mapped_output_put(mapped_output *m, uint64_t off, const void *data, size_t n)
{
  int err = grow(m, off + n);
  const uint8_t *src = data;
  while (err == 0 && n > 0) {
    const uint64_t room = WINDOW - off % WINDOW; /* to the end of off's window */
    const size_t piece = room < n ? (size_t)room : n;
    err = put_piece(m, off, src, piece);
    off += piece;
    src += piece;
    n -= piece;
  }
  return err;
}

int mapped_output_finish(mapped_output *m, uint64_t size)
{
  if (!m) return 0;
  int err = 0;
  while (m->live) {
    window *w = m->live;
    m->live = w->next;
    drop_window(w);
  }
  if (!m->fixed && m->size != size && ftruncate(m->fd, (off_t)size) != 0) err = errno;
  release_handler();
  pthread_mutex_destroy(&m->lock);
  free(m);
  return err;
}
