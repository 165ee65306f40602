/* c63parse's frame index, built on a thread of its own (gstc63indexer.h).
 *
 * Copyright (C) 2026 gst-c63 contributors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "gstc63indexer.h"

GST_DEBUG_CATEGORY_EXTERN(gst_c63_parse_debug);
#define GST_CAT_DEFAULT gst_c63_parse_debug

/* Bytes read at a time; a longer frame gets a larger read. Reads of the
 * streaming thread wait for one of these (upstream serves one at a time),
 * so it stays far below a second of video. */
#define INDEX_READ_BYTES (1u << 20)

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
}

/* Ends the thread, if any, and takes its handle. Called with the lock
 * held; returns with it held. */
static void gst_c63_indexer_join(GstC63Indexer *ix)
{
  GThread *thread = ix->thread;

  if (!thread) return;
  ix->thread = NULL;
  ix->quit = TRUE;
  g_mutex_unlock(&ix->lock);
  g_thread_join(thread);
  g_mutex_lock(&ix->lock);
  ix->quit = FALSE;
}

void gst_c63_indexer_clear(GstC63Indexer *ix)
{
  g_mutex_lock(&ix->lock);
  gst_c63_indexer_join(ix);
  g_mutex_unlock(&ix->lock);
  gst_c63_index_clear(&ix->index);
  gst_c63_index_clear(&ix->scanned);
  g_cond_clear(&ix->cond);
  g_mutex_clear(&ix->lock);
}

void gst_c63_indexer_reset(GstC63Indexer *ix)
{
  g_mutex_lock(&ix->lock);
  gst_c63_indexer_join(ix);
  gst_c63_index_reset(&ix->index);
  gst_c63_index_reset(&ix->scanned);
  ix->state = GST_C63_INDEXER_IDLE;
  ix->flow = GST_FLOW_OK;
  g_mutex_unlock(&ix->lock);
}

/* Index the size bytes at the scan position; *at_end when the stream ends
 * there, *used the bytes consumed. */
static GstFlowReturn gst_c63_indexer_scan_range(GstC63Indexer *ix, guint size, gboolean *at_end,
                                                gsize *used)
{
  GstBuffer *buf = NULL;
  GstFlowReturn ret = gst_pad_pull_range(ix->pad, ix->scanned.pos, size, &buf);
  GstMapInfo map;

  *used = 0;
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
  gst_buffer_unref(buf);
  return ret;
}

/* The frames scanned since the last publication go to the waiters. */
static void gst_c63_indexer_publish(GstC63Indexer *ix)
{
  guint n;

  g_mutex_lock(&ix->lock);
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
    gsize used;

    g_mutex_lock(&ix->lock);
    quit = ix->quit;
    g_mutex_unlock(&ix->lock);
    if (quit) {
      ret = GST_FLOW_FLUSHING;
      break;
    }
    ret = gst_c63_indexer_scan_range(ix, size, &at_end, &used);
    if (used == 0 && !at_end) size = MIN(size, G_MAXUINT / 4) * 2; /* a longer frame */
    if (used || at_end) gst_c63_indexer_publish(ix);
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
