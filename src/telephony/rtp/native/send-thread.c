/*
 * The send thread of the batched RTP I/O addon (rtp-io.c, MEDIA_IO_SEND_THREAD): a batch handed to
 * sendBatch(..., async) is copied into one of JOBS job buffers and sent from here, so the main thread
 * does not wait for the kernel. On loopback and on this VM a UDP send is the costly half of the I/O
 * (about 6 µs against 3 µs for a read: the send also runs the receiving socket's delivery), a quarter
 * of the gateway's main thread at 400 bridged calls. Jobs are sent in order; the addon's close waits
 * for the queue to empty, so a socket's last packet (its RTCP BYE) always leaves before its fd closes
 * and its number can be reused. A job may carry a time it must not leave before (the media bench's
 * phones queue their packets a few ticks ahead, so that they leave on their 20 ms grid whatever the
 * load generator's event loop is doing, as independent phones' would); the gateway's leave at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "g711.h"
#include "packet-io.h"
#include "send-thread.h"

/* Batches queued at most: JOBS, or HELD_JOBS while the batch being queued is held for a time (a load
 * generator's phones queue a few ticks of several batches ahead; the gateway's never wait to leave). */
#define JOBS 4
#define HELD_JOBS 16
struct send_job {
  size_t n, cap; /* packets, and the room of data (cap * SLOT bytes) and meta */
  unsigned char *data;
  int32_t *meta;
  bool use_ring;
  double not_before_ms; /* CLOCK_MONOTONIC ms; 0: at once */
};

struct sender {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work; /* signalled to the thread: a job queued, or stop */
  pthread_cond_t idle; /* signalled by the thread: a job done */
  struct send_job jobs[HELD_JOBS];
  size_t head, count;  /* the queued jobs are jobs[head], jobs[head + 1], ... (mod HELD_JOBS), count of them */
  long failed;         /* packets that failed since sendBatch last collected the figure */
  double waits;        /* batches handed over while the queue was full: the caller waited (sendWaits) */
  bool stop;
  struct io_ring *ring; /* the thread's own, made on its first job that asks for io_uring */
  bool ring_tried;
};

/* Sleeps until CLOCK_MONOTONIC reads `ms` (returns at once for a time already passed). */
static void sleep_until(double ms) {
  long long ns = (long long)(ms * 1e6);
  struct timespec at = {.tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
  }
}

static void *send_loop(void *arg) {
  struct sender *s = arg;
  pthread_mutex_lock(&s->mu);
  for (;;) {
    while (s->count == 0 && !s->stop) pthread_cond_wait(&s->work, &s->mu);
    if (s->count == 0) break; /* stopping, and every job sent */
    struct send_job *job = &s->jobs[s->head];
    pthread_mutex_unlock(&s->mu); /* the job at head is the thread's until count drops */
    if (job->not_before_ms > 0) sleep_until(job->not_before_ms);
    struct io_ring *ring = job->use_ring ? ring_once(&s->ring, &s->ring_tried) : NULL;
    long failed = send_packets(ring, job->data, job->meta, job->n);
    pthread_mutex_lock(&s->mu);
    s->failed += failed;
    s->head = (s->head + 1) % HELD_JOBS;
    s->count--;
    pthread_cond_broadcast(&s->idle);
  }
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

void wait_sent(struct sender *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&s->mu);
  while (s->count > 0) pthread_cond_wait(&s->idle, &s->mu);
  pthread_mutex_unlock(&s->mu);
}

/* Frees a sender whose thread is not running (joined, or never started). */
static void free_sender(struct sender *s) {
  pthread_cond_destroy(&s->idle);
  pthread_cond_destroy(&s->work);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

void stop_sender(struct sender *s) {
  if (s == NULL) return;
  pthread_mutex_lock(&s->mu);
  s->stop = true;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL); /* after the jobs still queued have left */
  free_ring(s->ring);
  for (size_t j = 0; j < HELD_JOBS; j++) {
    free(s->jobs[j].data);
    free(s->jobs[j].meta);
  }
  free_sender(s);
}

long queue_job(struct sender *s, const unsigned char *data, const int32_t *meta, size_t n, bool use_ring, double not_before_ms) {
  size_t most = not_before_ms > 0 ? HELD_JOBS : JOBS;
  pthread_mutex_lock(&s->mu);
  if (s->count >= most) s->waits++;
  while (s->count >= most) pthread_cond_wait(&s->idle, &s->mu);
  /* head + count stays the same while the thread finishes jobs: this slot is ours until we count it. */
  struct send_job *job = &s->jobs[(s->head + s->count) % HELD_JOBS];
  pthread_mutex_unlock(&s->mu);
  if (job->cap < n) {
    unsigned char *grown = realloc(job->data, n * SLOT);
    if (grown != NULL) job->data = grown;
    int32_t *meta_grown = realloc(job->meta, n * META * sizeof *meta_grown);
    if (meta_grown != NULL) job->meta = meta_grown;
    if (grown == NULL || meta_grown == NULL) return -1;
    job->cap = n;
  }
  for (size_t k = 0; k < n; k++) memcpy(job->data + k * SLOT, data + k * SLOT, (size_t)LEN_BYTES(meta[k * META + 1]));
  memcpy(job->meta, meta, n * META * sizeof *meta);
  job->n = n;
  job->use_ring = use_ring;
  job->not_before_ms = not_before_ms;
  pthread_mutex_lock(&s->mu);
  s->count++;
  long failed = s->failed;
  s->failed = 0;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->mu);
  return failed;
}

struct sender *start_sender(void) {
  struct sender *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->work, NULL);
  pthread_cond_init(&s->idle, NULL);
  if (pthread_create(&s->thread, NULL, send_loop, s) != 0) {
    free_sender(s);
    return NULL;
  }
  /* Named here, so it has its name once this returns: top -H and /proc/<pid>/task/<tid>/comm tell its CPU
   * from the event loop's (RTP_SEND_THREAD_NAME). */
  pthread_setname_np(s->thread, "vb-rtp-send");
  return s;
}

double sender_figure(struct sender *s, bool waits) {
  double figure = 0;
  if (s != NULL) {
    pthread_mutex_lock(&s->mu);
    figure = waits ? s->waits : (double)s->count;
    pthread_mutex_unlock(&s->mu);
  }
  return figure;
}
