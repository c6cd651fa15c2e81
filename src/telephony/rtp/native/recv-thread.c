/*
 * The receive thread of the batched RTP I/O addon (rtp-io.c, MEDIA_IO_RECV_THREAD, off by default).
 * Reading every leg's socket at the tick is the largest item of the event loop's media work: 17 % of its
 * busy time at 400 bridged calls (BENCHMARKS.md, twenty-fourth pass), nearly all of it the kernel's.
 * Here a thread of the addon's own waits on an epoll set of the sockets and reads the ready ones
 * (read_sockets: through its own io_uring where there is one) about once a millisecond, each packet with
 * its kernel arrival time, into a buffer the event loop takes at the tick with one copy. A packet waits
 * for the tick either way; read here it may wait up to READ_EVERY_NS more when it lands just before one,
 * which the jitter buffer's margin absorbs (its arrival time is the kernel's, so the jitter estimate
 * does not see it). Idle sockets (RTCP's) cost nothing: epoll reports only the ready ones.
 * Measured, it takes a fifth to a quarter of the event loop's CPU off it, but costs about twice as much
 * per packet on its own thread as the loop's read did: worth it where the loop is the limit and a core
 * is idle, not where the cores are full.
 */
#define _GNU_SOURCE
#include "recv-thread.h"
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "packet-io.h"

#define READ_EVERY_NS 1000000L /* at most one round of reads per millisecond: a round per packet would cost a wake-up each */
#define EVENTS 1024
#define CAPACITY 4096 /* packets held for the event loop (8 MB): 1,000 calls' 20 ms of packets with room to spare */

struct receiver {
  pthread_t thread;
  pthread_mutex_t mu; /* the buffers, n and stop; held while reading, so an unwatch never races a read */
  int ep, wake;       /* the epoll set, and an eventfd in it that stop writes to */
  bool stop;
  unsigned char *data; /* CAPACITY slots of SLOT bytes */
  int32_t *meta;       /* META per packet: fd, length (-1: truncated), port, address */
  double *arrivals;
  size_t n;
  /* watched[fd]: fd is in the set. An event epoll_wait returned may name an fd unwatched and closed since,
   * its number now another file's (a SIP connection's): only a watched one is read. */
  bool *watched;
  size_t watched_cap;
  int32_t ready[EVENTS]; /* the watched sockets of one epoll_wait */
  struct io_ring *ring;  /* the thread's own (io_uring where the addon has it), made on its first round */
  bool ring_tried;
};

/* Reads the ready sockets, as a drain does, into the buffer while there is room; called with mu held. */
static void read_ready(struct receiver *r, size_t nready, const struct drain_clocks *now) {
  /* Once each, without polling them again: epoll (level-triggered) reports a socket that still holds more next round. */
  size_t got = read_sockets(ring_once(&r->ring, &r->ring_tried), r->ready, nready, r->data + r->n * SLOT, r->meta + r->n * META, r->arrivals + r->n,
                            CAPACITY - r->n, true, now);
  for (size_t k = r->n; k < r->n + got; k++) r->meta[k * META] = r->ready[r->meta[k * META]]; /* index -> fd */
  r->n += got;
}

static bool is_watched(const struct receiver *r, int fd) {
  return fd >= 0 && (size_t)fd < r->watched_cap && r->watched[fd];
}

static void *recv_loop(void *arg) {
  struct receiver *r = arg;
  struct epoll_event events[EVENTS];
  const struct timespec pause = {0, READ_EVERY_NS};
  for (;;) {
    int ready = epoll_wait(r->ep, events, EVENTS, -1);
    if (ready < 0 && errno != EINTR) break;
    pthread_mutex_lock(&r->mu);
    bool stop = r->stop;
    if (!stop && ready > 0 && r->n < CAPACITY) {
      size_t nready = 0;
      for (int i = 0; i < ready; i++)
        if (is_watched(r, events[i].data.fd)) r->ready[nready++] = events[i].data.fd;
      struct drain_clocks now;
      read_clocks(&now);
      read_ready(r, nready, &now);
    }
    pthread_mutex_unlock(&r->mu);
    if (stop) break;
    nanosleep(&pause, NULL); /* let a millisecond's packets gather: one round reads them all */
  }
  return NULL;
}

static void free_receiver(struct receiver *r) {
  if (r->ep >= 0) close(r->ep);
  if (r->wake >= 0) close(r->wake);
  pthread_mutex_destroy(&r->mu);
  free(r->data);
  free(r->meta);
  free(r->arrivals);
  free(r->watched);
  free_ring(r->ring);
  free(r);
}

struct receiver *start_receiver(void) {
  struct receiver *r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  pthread_mutex_init(&r->mu, NULL);
  r->ep = epoll_create1(EPOLL_CLOEXEC);
  r->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  r->data = malloc((size_t)CAPACITY * SLOT);
  r->meta = malloc((size_t)CAPACITY * META * sizeof *r->meta);
  r->arrivals = malloc((size_t)CAPACITY * sizeof *r->arrivals);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = r->wake};
  if (r->ep < 0 || r->wake < 0 || r->data == NULL || r->meta == NULL || r->arrivals == NULL || epoll_ctl(r->ep, EPOLL_CTL_ADD, r->wake, &ev) < 0 ||
      pthread_create(&r->thread, NULL, recv_loop, r) != 0) {
    free_receiver(r);
    return NULL;
  }
  /* Named here, not by the thread, so it has its name once this returns: top -H tells its CPU from the event loop's. */
  pthread_setname_np(r->thread, "vb-rtp-recv");
  return r;
}

void stop_receiver(struct receiver *r) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->mu);
  r->stop = true;
  pthread_mutex_unlock(&r->mu);
  uint64_t one = 1;
  ssize_t written = write(r->wake, &one, sizeof one);
  (void)written; /* an eventfd write fails only at its counter's maximum: the thread is woken either way */
  pthread_join(r->thread, NULL);
  free_receiver(r);
}

int receiver_watch(struct receiver *r, int fd) {
  if (fd < 0) return -EBADF;
  int result = 0;
  pthread_mutex_lock(&r->mu);
  if ((size_t)fd >= r->watched_cap) {
    size_t cap = (size_t)fd * 2 + 64;
    bool *grown = realloc(r->watched, cap * sizeof *grown);
    if (grown == NULL) {
      result = -ENOMEM;
    } else {
      memset(grown + r->watched_cap, 0, (cap - r->watched_cap) * sizeof *grown);
      r->watched = grown;
      r->watched_cap = cap;
    }
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
  if (result == 0 && epoll_ctl(r->ep, EPOLL_CTL_ADD, fd, &ev) < 0) result = -errno;
  if (result == 0) r->watched[fd] = true;
  pthread_mutex_unlock(&r->mu);
  return result;
}

void receiver_unwatch(struct receiver *r, int fd) {
  if (r == NULL) return;
  pthread_mutex_lock(&r->mu);
  if (!is_watched(r, fd)) {
    pthread_mutex_unlock(&r->mu);
    return;
  }
  r->watched[fd] = false;
  epoll_ctl(r->ep, EPOLL_CTL_DEL, fd, NULL);
  size_t kept = 0;
  for (size_t k = 0; k < r->n; k++) {
    if (r->meta[k * META] == fd) continue;
    if (kept != k) {
      int32_t len = r->meta[k * META + 1];
      if (len > 0) memmove(r->data + kept * SLOT, r->data + k * SLOT, (size_t)len);
      memmove(r->meta + kept * META, r->meta + k * META, META * sizeof *r->meta);
      r->arrivals[kept] = r->arrivals[k];
    }
    kept++;
  }
  r->n = kept;
  pthread_mutex_unlock(&r->mu);
}

size_t receiver_take(struct receiver *r, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity) {
  pthread_mutex_lock(&r->mu);
  size_t n = r->n < capacity ? r->n : capacity;
  for (size_t k = 0; k < n; k++) {
    int32_t len = r->meta[k * META + 1];
    if (len > 0) memcpy(out + k * SLOT, r->data + k * SLOT, (size_t)len);
  }
  memcpy(meta, r->meta, n * META * sizeof *meta);
  memcpy(arrivals, r->arrivals, n * sizeof *arrivals);
  size_t rest = r->n - n; /* more than the caller holds: the rest moves down for its next call */
  for (size_t k = 0; k < rest; k++) {
    int32_t len = r->meta[(n + k) * META + 1];
    if (len > 0) memmove(r->data + k * SLOT, r->data + (n + k) * SLOT, (size_t)len);
  }
  memmove(r->meta, r->meta + n * META, rest * META * sizeof *r->meta);
  memmove(r->arrivals, r->arrivals + n, rest * sizeof *r->arrivals);
  r->n = rest;
  pthread_mutex_unlock(&r->mu);
  return n;
}

size_t receiver_pending(struct receiver *r) {
  pthread_mutex_lock(&r->mu);
  size_t n = r->n;
  pthread_mutex_unlock(&r->mu);
  return n;
}
