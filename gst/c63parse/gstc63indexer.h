/* GstC63Indexer: c63parse's frame index in pull mode, built on a thread of
 * its own that reads the stream ahead of the frames being pushed. The
 * streaming thread waits only until the index has passed the frame it
 * handles (the indexer reads and scans far faster than frames are
 * decoded), seeks and duration queries until the index is whole; so the
 * first frame goes out at once.
 *
 * The indexer's reads are the streaming thread's too: each read (whole
 * frames) is kept until the frames in it have been pulled, and a pull of
 * the sink pad that falls inside one is answered with that part of it (a
 * pad probe), so the stream is read once and not on the streaming
 * thread. The reads kept are bounded (GST_C63_INDEXER_AHEAD_BYTES): the
 * indexer waits for the frames to be pulled, unless someone waits for the
 * whole index; then it reads on without keeping what does not fit.
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifndef GST_C63_INDEXER_H
#define GST_C63_INDEXER_H

#include <gst/gst.h>

#include "gstc63index.h"

G_BEGIN_DECLS

typedef enum {
  GST_C63_INDEXER_IDLE,    /* not started (or reset) */
  GST_C63_INDEXER_RUNNING, /* the thread reads and scans */
  GST_C63_INDEXER_WHOLE,   /* every frame of the stream is indexed */
  GST_C63_INDEXER_STOPPED, /* ended early: flow says why */
} GstC63IndexerState;

/* Called on the indexer's thread once the index is whole, before waiters
 * learn it: FALSE fails the index (an error the callback posted). */
typedef gboolean (*GstC63IndexerWholeFunc)(const GstC63Index *index, gpointer user_data);

typedef struct {
  GstPad *pad;         /* the sink pad it pulls through; not a reference */
  GstElement *element; /* whose errors it posts; not a reference */
  GstC63IndexerWholeFunc whole;
  gpointer user_data;

  GMutex lock;
  GCond cond;        /* the index grew, or the thread ended */
  GstC63Index index; /* published so far: read under lock */
  GstC63IndexerState state;
  GstFlowReturn flow; /* STOPPED: why */
  gboolean quit;      /* the thread is to end at its next read */
  GThread *thread;

  GstC63Index scanned; /* the thread's own, published after each read */

  /* Reads kept for the streaming thread's pulls (under lock). */
  GQueue ahead;        /* GstBuffer *, whole frames, by GST_BUFFER_OFFSET */
  guint64 ahead_bytes; /* in ahead */
  GCond room;          /* ahead lost a read, or the thread is to read on */
  gboolean want_whole; /* someone waits for the whole index */
  gulong probe;        /* on pad while the thread has run since the last reset; 0: none */
} GstC63Indexer;

/* The reads kept ahead of the frames pulled: many frames (so the streaming
 * thread never waits for a read), yet a small share of memory. */
#define GST_C63_INDEXER_AHEAD_BYTES (16u << 20)

void gst_c63_indexer_init(GstC63Indexer *ix, GstElement *element, GstPad *pad,
                          GstC63IndexerWholeFunc whole, gpointer user_data);
/* Stops the thread and frees the index. */
void gst_c63_indexer_clear(GstC63Indexer *ix);

/* Ends the thread (its pulls fail once the pad is flushing, as it is when
 * deactivated) and forgets the index and the reads kept, to start again
 * from offset 0; the pad's probe goes too. */
void gst_c63_indexer_reset(GstC63Indexer *ix);

/* Waits until the frame at offset (if one starts there) is indexed,
 * starting the thread if it is not running (again, after a flush stopped
 * it), and sets *frame to what the index knows of it. GST_FLOW_OK, or why
 * the index stopped short of it. */
GstFlowReturn gst_c63_indexer_wait_past(GstC63Indexer *ix, guint64 offset,
                                        GstC63IndexedFrame *frame);

/* Waits for a running thread to end, which then keeps no more reads than
 * fit: the index once whole (it stays so until a reset), else NULL. */
const GstC63Index *gst_c63_indexer_wait_whole(GstC63Indexer *ix);

/* What the index published so far knows of the frame at offset. */
void gst_c63_indexer_frame(GstC63Indexer *ix, guint64 offset, GstC63IndexedFrame *frame);

G_END_DECLS

#endif /* GST_C63_INDEXER_H */
