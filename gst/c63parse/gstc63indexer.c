/* c63parse's frame index, built on a thread of its own (gstc63indexer.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstc63indexer.h"

GST_DEBUG_CATEGORY_EXTERN(gst_c63_parse_debug);
#define GST_CAT_DEFAULT gst_c63_parse_debug

/* Bytes read at a time; a longer frame gets a larger read. A pull of the
 * streaming thread that is not answered from the reads kept waits for one
 * of these (upstream serves one at a time), so it stays far below a second
 * of video. */
#define INDEX_READ_BYTES (1u << 20)

static GstPadProbeReturn gst_c63_indexer_serve(GstPad *pad, GstPadProbeInfo *info,
                                               gpointer user_data);

void gst_c63_indexer_init(GstC63Indexer *ix, GstElement *element, GstPad *pad,
                          GstC63IndexerWholeFunc whole, gpointer user_data)
{
  ix->pad = pad;
  ix->element = element;
  ix->whole = whole;
  ix->user_data = user_data;
  g_mutex_init(&ix->lock);
  g_cond_init(&ix->cond);
  gst_c63_index_init(&ix->index);
  gst_c63_index_init(&ix->scanned);
  ix->state = GST_C63_INDEXER_IDLE;
  ix->flow = GST_FLOW_OK;
  ix->quit = FALSE;
  ix->thread = NULL;
  g_queue_init(&ix->ahead);
  ix->ahead_bytes = 0;
  g_cond_init(&ix->room);
  ix->want_whole = FALSE;
  ix->probe = 0;
}

/* Forget the reads kept up to offset (all: G_MAXUINT64). Called with the
 * lock held. */
static void gst_c63_indexer_drop_ahead(GstC63Indexer *ix, guint64 offset)
{
  GstBuffer *b;
  gboolean dropped = FALSE;

  while ((b = g_queue_peek_head(&ix->ahead)) &&
         GST_BUFFER_OFFSET(b) + gst_buffer_get_size(b) <= offset) {
    ix->ahead_bytes -= gst_buffer_get_size(b);
    gst_buffer_unref(g_queue_pop_head(&ix->ahead));
    dropped = TRUE;
  }
  if (dropped) g_cond_broadcast(&ix->room);
}

/* The pad's pulls, the streaming thread's and the indexer's: one that lies
 * inside a read kept is answered with that part of it (the reads before it
 * are done with), others go upstream. The indexer's own never lie inside
 * one: it reads from where its scan stands, past every read kept. */
static GstPadProbeReturn gst_c63_indexer_serve(G_GNUC_UNUSED GstPad *pad, GstPadProbeInfo *info,
                                               gpointer user_data)
{
  GstC63Indexer *ix = user_data;
  const guint64 offset = info->offset;
  GstBuffer *part = NULL;
  GList *l;

  if (GST_PAD_PROBE_INFO_DATA(info)) return GST_PAD_PROBE_PASS; /* into a caller's buffer */
  g_mutex_lock(&ix->lock);
  for (l = ix->ahead.head; l; l = l->next) {
    GstBuffer *b = l->data;
    const guint64 start = GST_BUFFER_OFFSET(b);

    if (offset < start) break;
    if (offset + info->size <= start + gst_buffer_get_size(b)) {
      part = gst_buffer_copy_region(b, GST_BUFFER_COPY_MEMORY, offset - start, info->size);
      GST_BUFFER_OFFSET(part) = offset;
      gst_c63_indexer_drop_ahead(ix, start);
      break;
    }
  }
  g_mutex_unlock(&ix->lock);
  if (!part) return GST_PAD_PROBE_PASS;
  /* Dropped with a buffer in its place: the pull returns that buffer. */
  GST_PAD_PROBE_INFO_DATA(info) = part;
  return GST_PAD_PROBE_DROP;
}

/* Ends the thread, if any, and takes its handle. Called with the lock
 * held; returns with it held. */
static void gst_c63_indexer_join(GstC63Indexer *ix)
{
  GThread *thread = ix->thread;

  if (!thread) return;
  ix->thread = NULL;
  ix->quit = TRUE;
  g_cond_broadcast(&ix->room);
  g_mutex_unlock(&ix->lock);
  g_thread_join(thread);
  g_mutex_lock(&ix->lock);
  ix->quit = FALSE;
}

void gst_c63_indexer_clear(GstC63Indexer *ix)
{
  g_mutex_lock(&ix->lock);
  gst_c63_indexer_join(ix);
  gst_c63_indexer_drop_ahead(ix, G_MAXUINT64);
  g_mutex_unlock(&ix->lock);
  gst_c63_index_clear(&ix->index);
  gst_c63_index_clear(&ix->scanned);
  g_cond_clear(&ix->room);
  g_cond_clear(&ix->cond);
  g_mutex_clear(&ix->lock);
}

void gst_c63_indexer_reset(GstC63Indexer *ix)
{
  gulong probe;

  g_mutex_lock(&ix->lock);
  gst_c63_indexer_join(ix);
  gst_c63_index_reset(&ix->index);
  gst_c63_index_reset(&ix->scanned);
  gst_c63_indexer_drop_ahead(ix, G_MAXUINT64);
  ix->want_whole = FALSE;
  ix->state = GST_C63_INDEXER_IDLE;
  ix->flow = GST_FLOW_OK;
  probe = ix->probe;
  ix->probe = 0;
  g_mutex_unlock(&ix->lock);
  if (probe) gst_pad_remove_probe(ix->pad, probe);
}

/* Index the size bytes at the scan position; *at_end when the stream ends
 * there, *used the bytes consumed (whole frames, and junk), *read what was
 * read (NULL when nothing). */
static GstFlowReturn gst_c63_indexer_scan_range(GstC63Indexer *ix, guint size, gboolean *at_end,
                                                gsize *used, GstBuffer **read)
{
  GstBuffer *buf = NULL;
  GstFlowReturn ret = gst_pad_pull_range(ix->pad, ix->scanned.pos, size, &buf);
  GstMapInfo map;

  *used = 0;
  *read = NULL;
  if (ret == GST_FLOW_EOS) { /* the stream ended with the last frame */
    *at_end = TRUE;
    return GST_FLOW_OK;
  }
  if (ret != GST_FLOW_OK) return ret;
  if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
    *at_end = map.size < size;
    *used = gst_c63_index_scan(&ix->scanned, map.data, map.size, *at_end);
    gst_buffer_unmap(buf, &map);
  } else {
    GST_ELEMENT_ERROR(ix->element, RESOURCE, READ, (NULL), ("cannot map the input"));
    ret = GST_FLOW_ERROR;
  }
  if (ret == GST_FLOW_OK)
    *read = buf;
  else
    gst_buffer_unref(buf);
  return ret;
}

/* The frames scanned since the last publication go to the waiters, and
 * the bytes they came from (used bytes of read, from offset on) are kept
 * for the streaming thread while fewer than the bound are. */
static void gst_c63_indexer_publish(GstC63Indexer *ix, GstBuffer *read, guint64 offset, gsize used)
{
  guint n;

  g_mutex_lock(&ix->lock);
  if (read && used && ix->ahead_bytes < GST_C63_INDEXER_AHEAD_BYTES) {
    GstBuffer *kept = gst_buffer_copy_region(read, GST_BUFFER_COPY_MEMORY, 0, used);

    GST_BUFFER_OFFSET(kept) = offset;
    g_queue_push_tail(&ix->ahead, kept);
    ix->ahead_bytes += used;
  }
  for (n = gst_c63_index_n_frames(&ix->index); n < gst_c63_index_n_frames(&ix->scanned); n++)
    g_array_append_val(ix->index.entries, *gst_c63_index_entry(&ix->scanned, n));
  ix->index.pos = ix->scanned.pos;
  g_cond_broadcast(&ix->cond);
  g_mutex_unlock(&ix->lock);
}

static gpointer gst_c63_indexer_loop(gpointer data)
{
  GstC63Indexer *ix = data;
  guint size = INDEX_READ_BYTES;
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean at_end = FALSE, quit = FALSE;

  while (ret == GST_FLOW_OK && !at_end) {
    const guint64 offset = ix->scanned.pos;
    GstBuffer *read;
    gsize used;

    /* Ahead by the bound: on once the streaming thread has pulled frames,
     * or at once for someone who waits for the whole index. */
    g_mutex_lock(&ix->lock);
    while (!ix->quit && !ix->want_whole && ix->ahead_bytes >= GST_C63_INDEXER_AHEAD_BYTES)
      g_cond_wait(&ix->room, &ix->lock);
    quit = ix->quit;
    g_mutex_unlock(&ix->lock);
    if (quit) {
      ret = GST_FLOW_FLUSHING;
      break;
    }
    ret = gst_c63_indexer_scan_range(ix, size, &at_end, &used, &read);
    if (used == 0 && !at_end) size = MIN(size, G_MAXUINT / 4) * 2; /* a longer frame */
    if (used || at_end) gst_c63_indexer_publish(ix, read, offset, used);
    if (read) gst_buffer_unref(read);
  }
  /* Whole: published (duration, keyframes) before anyone learns it. */
  if (ret == GST_FLOW_OK && !ix->whole(&ix->index, ix->user_data)) ret = GST_FLOW_ERROR;
  GST_DEBUG_OBJECT(ix->element, "index %s at offset %" G_GUINT64_FORMAT,
                   ret == GST_FLOW_OK ? "whole" : gst_flow_get_name(ret), ix->scanned.pos);
  g_mutex_lock(&ix->lock);
  ix->state = ret == GST_FLOW_OK ? GST_C63_INDEXER_WHOLE : GST_C63_INDEXER_STOPPED;
  ix->flow = ret;
  g_cond_broadcast(&ix->cond);
  g_mutex_unlock(&ix->lock);
  return NULL;
}

/* Starts the thread from where the scan stands. Called with the lock held
 * and no thread running. */
static GstFlowReturn gst_c63_indexer_start(GstC63Indexer *ix)
{
  GError *err = NULL;

  /* A pull probe must block to be asked before the pull; it answers or
   * passes every pull, so nothing ever waits on it. Put while the pad is
   * in pull mode: from the first start to the next reset. */
  if (!ix->probe)
    ix->probe = gst_pad_add_probe(ix->pad, GST_PAD_PROBE_TYPE_PULL | GST_PAD_PROBE_TYPE_BLOCK,
                                  gst_c63_indexer_serve, ix, NULL);
  ix->state = GST_C63_INDEXER_RUNNING;
  ix->flow = GST_FLOW_OK;
  ix->thread = g_thread_try_new("c63parse-index", gst_c63_indexer_loop, ix, &err);
  if (ix->thread) return GST_FLOW_OK;
  GST_ELEMENT_ERROR(ix->element, RESOURCE, FAILED,
                    ("Could not start the thread that indexes the stream"), ("%s", err->message));
  g_error_free(err);
  ix->state = GST_C63_INDEXER_STOPPED;
  ix->flow = GST_FLOW_ERROR;
  return GST_FLOW_ERROR;
}

GstFlowReturn gst_c63_indexer_wait_past(GstC63Indexer *ix, guint64 offset,
                                        GstC63IndexedFrame *frame)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gboolean restarted = FALSE;

  g_mutex_lock(&ix->lock);
  /* Reads before offset are done with (the streaming thread moved on). */
  gst_c63_indexer_drop_ahead(ix, offset);
  for (;;) {
    if (ix->state == GST_C63_INDEXER_WHOLE || ix->index.pos > offset) break;
    if (ix->state == GST_C63_INDEXER_RUNNING) {
      g_cond_wait(&ix->cond, &ix->lock);
      continue;
    }
    /* Stopped by a flush (its pulls fail while the pad flushes): started
     * again once, from where it stopped, as streaming goes on. */
    if (ix->state == GST_C63_INDEXER_STOPPED && (ix->flow != GST_FLOW_FLUSHING || restarted)) {
      ret = ix->flow;
      break;
    }
    gst_c63_indexer_join(ix);
    restarted = ix->state == GST_C63_INDEXER_STOPPED;
    ret = gst_c63_indexer_start(ix);
    if (ret != GST_FLOW_OK) break;
  }
  gst_c63_index_lookup(&ix->index, offset, frame);
  g_mutex_unlock(&ix->lock);
  return ret;
}

const GstC63Index *gst_c63_indexer_wait_whole(GstC63Indexer *ix)
{
  gboolean whole;

  g_mutex_lock(&ix->lock);
  ix->want_whole = TRUE;
  g_cond_broadcast(&ix->room);
  while (ix->state == GST_C63_INDEXER_RUNNING)
    g_cond_wait(&ix->cond, &ix->lock);
  whole = ix->state == GST_C63_INDEXER_WHOLE;
  g_mutex_unlock(&ix->lock);
  return whole ? &ix->index : NULL;
}

void gst_c63_indexer_frame(GstC63Indexer *ix, guint64 offset, GstC63IndexedFrame *frame)
{
  g_mutex_lock(&ix->lock);
  gst_c63_index_lookup(&ix->index, offset, frame);
  g_mutex_unlock(&ix->lock);
}
