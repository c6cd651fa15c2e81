/* The addon's send thread (send-thread.c): RTP batches sent off the event loop, in order. */
#ifndef VOXBRIDGE_SEND_THREAD_H
#define VOXBRIDGE_SEND_THREAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sender;

/* A started send thread, or NULL when it cannot start (the caller then sends synchronously). */
struct sender *start_sender(void);
/* Joins the thread once its queued batches have left, and frees it. NULL: nothing. */
void stop_sender(struct sender *s);
/* Waits until every queued batch has been sent. NULL: returns at once. */
void wait_sent(struct sender *s);
/*
 * Copies the batch into the next free job (waiting while all are queued) and hands it to the thread,
 * which sends it once CLOCK_MONOTONIC reads `not_before_ms` (0: at once; the jobs behind it wait too).
 * Returns the packets of earlier batches that failed, or -1 when the job buffers cannot grow (nothing queued).
 */
long queue_job(struct sender *s, const unsigned char *data, const int32_t *meta, size_t n, bool use_ring, double not_before_ms);
/* Batches still queued (a close now would wait for them), or how often a caller waited for a free job. */
double sender_figure(struct sender *s, bool waits);
#endif
