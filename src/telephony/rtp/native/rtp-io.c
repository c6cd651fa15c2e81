/*
 * Batched RTP socket I/O for the media clock (MEDIA_IO=native, see ../native-io.ts).
 *
 * With dgram every datagram costs a libuv read callback (two recvmsg calls, the second finding the
 * queue empty), a Buffer, an rinfo object and a send wrap: on the slow VM of BENCHMARKS.md's twelfth
 * pass over a third of the gateway's CPU. Here every leg's socket is read once per 20 ms tick with one
 * recvmmsg into a caller-owned buffer, the kernel's arrival time of each packet kept (SO_TIMESTAMPNS) for
 * the jitter estimate and the jitter buffer. With io_uring (liburing at build time, and a kernel that
 * allows it) a tick's reads of every readable socket (one poll() finds them) go in one submission, and
 * so do its packets out — one per leg, each from its leg's own socket, which sendmmsg cannot batch;
 * without it, one recvmmsg per socket and one sendto per packet.
 *
 * IPv4 only (the caller falls back to dgram for IPv6 media addresses). Addresses cross the boundary
 * as host-order uint32, ports as numbers. Every function returns -errno on failure and never throws.
 * The sends may leave from a thread of the addon's own (send-thread.c, MEDIA_IO_SEND_THREAD), and the
 * reads be done by another (recv-thread.c, MEDIA_IO_RECV_THREAD).
 * Built by scripts/build-rtp-io.sh: gcc -O2 -shared -fPIC -pthread -I<node headers> [-DVOXBRIDGE_URING -luring] rtp-io.c send-thread.c recv-thread.c g711.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <node_api.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef VOXBRIDGE_URING
#include <liburing.h>
#endif
#include "g711.h"
#include "packet-io.h"
#include "recv-thread.h"
#include "send-thread.h"

#define VLEN 16   /* packets per recvmmsg call */
#define MAX_ARGS 6
#define CONTROL_BYTES CMSG_SPACE(sizeof(struct timespec)) /* room for SCM_TIMESTAMPNS */

static napi_value num(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

/* Up to MAX_ARGS arguments; missing ones are left NULL (every reader below then sees its default). */
static void args(napi_env env, napi_callback_info info, napi_value *argv) {
  size_t argc = MAX_ARGS;
  for (int i = 0; i < MAX_ARGS; i++) argv[i] = NULL;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
}

static int32_t int_at(napi_env env, napi_value v, int32_t fallback) {
  int32_t out = fallback;
  if (v == NULL || napi_get_value_int32(env, v, &out) != napi_ok) return fallback;
  return out;
}

static bool bool_at(napi_env env, napi_value v, bool fallback) {
  bool out = fallback;
  if (v == NULL || napi_get_value_bool(env, v, &out) != napi_ok) return fallback;
  return out;
}

static double double_at(napi_env env, napi_value v, double fallback) {
  double out = fallback;
  if (v == NULL || napi_get_value_double(env, v, &out) != napi_ok) return fallback;
  return out;
}

static uint32_t uint_at(napi_env env, napi_value v) {
  uint32_t out = 0;
  if (v != NULL) napi_get_value_uint32(env, v, &out);
  return out;
}

/* A typed array's data and element count; 0 elements when `v` is not one. */
static size_t typed_at(napi_env env, napi_value v, void **data) {
  size_t len = 0;
  *data = NULL;
  if (v == NULL || napi_get_typedarray_info(env, v, NULL, &len, data, NULL, NULL) != napi_ok) return 0;
  return len;
}

/* Packets a read may leave in the caller's buffers: as many as the smallest of them holds. */
static size_t read_capacity(size_t out_len, size_t meta_len, size_t arrivals_len) {
  size_t capacity = out_len / SLOT;
  if (meta_len / META < capacity) capacity = meta_len / META;
  return arrivals_len < capacity ? arrivals_len : capacity;
}

static void fill_sockaddr(struct sockaddr_in *to, uint32_t address, int32_t port) {
  memset(to, 0, sizeof *to);
  to->sin_family = AF_INET;
  to->sin_port = htons((uint16_t)port);
  to->sin_addr.s_addr = htonl(address);
}

/* Points `h` at one buffer, an address, and (for reads; NULL for sends) a zeroed control buffer. */
static void point_msghdr(struct msghdr *h, struct iovec *iov, void *buf, size_t len, struct sockaddr_in *name, char *control) {
  memset(h, 0, sizeof *h);
  iov->iov_base = buf;
  iov->iov_len = len;
  h->msg_iov = iov;
  h->msg_iovlen = 1;
  h->msg_name = name;
  h->msg_namelen = name == NULL ? 0 : sizeof *name;
  if (control != NULL) {
    /* Zeroed: a read that brings no timestamp then leaves nothing that parses as one. */
    memset(control, 0, CONTROL_BYTES);
    h->msg_control = control;
    h->msg_controllen = CONTROL_BYTES;
  }
}

/*
 * open(address: uint32, port) -> fd, or -errno: a non-blocking UDP socket bound to address:port
 * with kernel receive timestamps on.
 */
static napi_value open_socket(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  int32_t port = int_at(env, argv[1], -1);
  if (port < 0 || port > 65535) return num(env, -EINVAL);
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return num(env, -errno);
  int on = 1;
  struct sockaddr_in a;
  fill_sockaddr(&a, uint_at(env, argv[0]), port);
  if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    close(fd);
    return num(env, -e);
  }
  return num(env, fd);
}

/*
 * connect(fd, address: uint32, port) -> 0 or -errno: the socket takes datagrams from address:port only
 * (the kernel drops the rest), and a send whose meta port is 0 goes there without a destination, on
 * the route the kernel keeps for a connected socket instead of a route lookup per datagram. Port 0
 * dissolves the association (AF_UNSPEC): the socket takes any source again.
 */
static napi_value connect_socket(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  int fd = int_at(env, argv[0], -1);
  int32_t port = int_at(env, argv[2], -1);
  if (port < 0 || port > 65535) return num(env, -EINVAL);
  struct sockaddr_in a;
  fill_sockaddr(&a, uint_at(env, argv[1]), port);
  if (port == 0) a.sin_family = AF_UNSPEC;
  return num(env, connect(fd, (struct sockaddr *)&a, sizeof a) < 0 ? -errno : 0);
}

/* port(fd) -> the bound port, or -errno. */
static napi_value local_port(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  if (getsockname(int_at(env, argv[0], -1), (struct sockaddr *)&a, &len) < 0) return num(env, -errno);
  return num(env, ntohs(a.sin_port));
}

static struct sender *started_sender(napi_env env);

/*
 * close(fd) -> 0 or -errno; first waits for the send thread's queued packets (one may be this socket's
 * last). A socket a receive thread reads is unwatched first (recvUnwatch).
 */
static napi_value close_socket(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  wait_sent(started_sender(env));
  return num(env, close(int_at(env, argv[0], -1)) < 0 ? -errno : 0);
}

#ifdef VOXBRIDGE_URING
/*
 * One io_uring and the entries of one submission, shared by the sends and reads of the one thread that
 * uses it (they never overlap): the environment's own thread for drains, the send thread for its sends.
 */
#define RING_ENTRIES 512
struct io_ring {
  struct io_uring ring;
  struct msghdr hdr[RING_ENTRIES];
  struct iovec iov[RING_ENTRIES];
  struct sockaddr_in addr[RING_ENTRIES];
  char control[RING_ENTRIES][CONTROL_BYTES];
  int32_t res[RING_ENTRIES];
  /* Indices (into fds) of the sockets still to read this tick, and their poll entries; grown together. */
  size_t *active;
  struct pollfd *polls;
  size_t active_cap;
};

/* A ring, or NULL when the kernel refuses io_uring (sendto and recvmmsg then). */
static struct io_ring *new_ring(void) {
  struct io_ring *r = calloc(1, sizeof *r);
  if (r != NULL && io_uring_queue_init(RING_ENTRIES, &r->ring, 0) != 0) {
    free(r);
    r = NULL;
  }
  return r;
}

struct io_ring *ring_once(struct io_ring **r, bool *tried) {
  if (!*tried) {
    *tried = true;
    *r = new_ring();
  }
  return *r;
}

void free_ring(struct io_ring *r) {
  if (r == NULL) return;
  io_uring_queue_exit(&r->ring);
  free(r->active);
  free(r->polls);
  free(r);
}
#endif

/* Per N-API environment (the main thread, or a worker thread that loads the addon). */
struct env_io {
#ifdef VOXBRIDGE_URING
  struct io_ring *ring;
  bool ring_tried;
#endif
  struct sender *sender; /* NULL until the first asynchronous send */
  bool sender_tried;
};

static void free_env_io(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  struct env_io *e = data;
  stop_sender(e->sender); /* joins the thread once its queued batches have left */
#ifdef VOXBRIDGE_URING
  free_ring(e->ring);
#endif
  free(e);
}

static struct env_io *env_io_of(napi_env env) {
  struct env_io *e = NULL;
  napi_get_instance_data(env, (void **)&e);
  if (e == NULL) {
    e = calloc(1, sizeof *e);
    if (e != NULL) napi_set_instance_data(env, e, free_env_io, NULL);
  }
  return e;
}

#ifdef VOXBRIDGE_URING
/* This environment's ring, set up on first use; NULL when io_uring is unavailable. */
static struct io_ring *ring_of(napi_env env) {
  struct env_io *e = env_io_of(env);
  return e == NULL ? NULL : ring_once(&e->ring, &e->ring_tried);
}

/*
 * Submits the `queued` entries prepared (user data: their index) and waits for all of them; their
 * results go to r->res (-EAGAIN for one that never completed). -1 when the submission failed.
 * Non-blocking UDP sends and reads with MSG_DONTWAIT complete inline: this never waits on the network.
 */
static int submit_and_reap(struct io_ring *r, size_t queued) {
  for (size_t j = 0; j < queued; j++) r->res[j] = -EAGAIN;
  if (io_uring_submit_and_wait(&r->ring, (unsigned)queued) < 0) return -1;
  for (size_t got = 0; got < queued; got++) {
    struct io_uring_cqe *cqe;
    if (io_uring_wait_cqe(&r->ring, &cqe) < 0) break;
    r->res[io_uring_cqe_get_data64(cqe)] = cqe->res;
    io_uring_cqe_seen(&r->ring, cqe);
  }
  return 0;
}
#endif

/* The packets k in [from, to) of a batch with one sendto each; results into meta. */
static void send_each(unsigned char *data, int32_t *meta, size_t from, size_t to) {
  struct sockaddr_in addr;
  for (size_t k = from; k < to; k++) {
    int32_t *m = meta + k * META;
    fill_sockaddr(&addr, (uint32_t)m[3], m[2]);
    /* Port 0: the socket's connected peer (see connect_socket). */
    ssize_t n = m[2] == 0 ? send(m[0], data + k * SLOT, (size_t)m[1], MSG_DONTWAIT)
                          : sendto(m[0], data + k * SLOT, (size_t)m[1], MSG_DONTWAIT, (struct sockaddr *)&addr, sizeof addr);
    m[1] = n < 0 ? -errno : (int32_t)n;
  }
}

#ifdef VOXBRIDGE_URING
/* The batch's packets as sendmsg entries, RING_ENTRIES per submission; sendto for the rest if the ring fails. */
static void send_ring(struct io_ring *r, unsigned char *data, int32_t *meta, size_t n) {
  for (size_t done = 0; done < n;) {
    size_t chunk = n - done < RING_ENTRIES ? n - done : RING_ENTRIES;
    size_t queued = 0;
    for (; queued < chunk; queued++) {
      struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
      if (sqe == NULL) break;
      size_t k = done + queued;
      int32_t *m = meta + k * META;
      fill_sockaddr(&r->addr[queued], (uint32_t)m[3], m[2]);
      point_msghdr(&r->hdr[queued], &r->iov[queued], data + k * SLOT, (size_t)m[1], m[2] == 0 ? NULL : &r->addr[queued], NULL);
      io_uring_prep_sendmsg(sqe, m[0], &r->hdr[queued], MSG_DONTWAIT);
      io_uring_sqe_set_data64(sqe, queued);
    }
    if (queued == 0 || submit_and_reap(r, queued) < 0) {
      send_each(data, meta, done, n);
      return;
    }
    for (size_t j = 0; j < queued; j++) meta[(done + j) * META + 1] = r->res[j];
    done += queued;
  }
}
#endif

#ifndef VOXBRIDGE_URING
struct io_ring *ring_once(struct io_ring **r, bool *tried) {
  (void)tried;
  return *r = NULL;
}

void free_ring(struct io_ring *r) {
  (void)r;
}
#endif

long send_packets(struct io_ring *r, unsigned char *data, int32_t *meta, size_t n) {
  g711_encode_batch(data, meta, n);
#ifdef VOXBRIDGE_URING
  if (r != NULL) send_ring(r, data, meta, n);
  else send_each(data, meta, 0, n);
#else
  (void)r;
  send_each(data, meta, 0, n);
#endif
  long failed = 0;
  for (size_t k = 0; k < n; k++) failed += meta[k * META + 1] < 0;
  return failed;
}


/* This environment's send thread, started on first use; NULL when it cannot start (sends stay synchronous). */
static struct sender *sender_of(napi_env env) {
  struct env_io *e = env_io_of(env);
  if (e == NULL) return NULL;
  if (!e->sender_tried) {
    e->sender_tried = true;
    e->sender = start_sender();
  }
  return e->sender;
}

/*
 * Receive threads (recv-thread.c), one per reader of the caller's (one per media clock), each behind a
 * handle: recvStart() -> handle, or null when the thread cannot start; recvStop(handle) stops it (so
 * does the handle's collection).
 */
struct receiver_handle {
  struct receiver *r; /* NULL once stopped */
};

static void finalize_receiver(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  struct receiver_handle *h = data;
  stop_receiver(h->r);
  free(h);
}

static struct receiver_handle *handle_at(napi_env env, napi_value v) {
  struct receiver_handle *h = NULL;
  if (v == NULL || napi_get_value_external(env, v, (void **)&h) != napi_ok) return NULL;
  return h;
}

/* The running thread behind a handle; NULL for a stopped one or something else. */
static struct receiver *receiver_at(napi_env env, napi_value v) {
  struct receiver_handle *h = handle_at(env, v);
  return h == NULL ? NULL : h->r;
}

static napi_value recv_start(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_get_null(env, &out);
  struct receiver_handle *h = calloc(1, sizeof *h);
  if (h == NULL) return out;
  h->r = start_receiver();
  if (h->r == NULL || napi_create_external(env, h, finalize_receiver, NULL, &out) != napi_ok) {
    stop_receiver(h->r);
    free(h);
    napi_get_null(env, &out);
  }
  return out;
}

static napi_value recv_stop(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  struct receiver_handle *h = handle_at(env, argv[0]);
  if (h != NULL) {
    stop_receiver(h->r);
    h->r = NULL;
  }
  return num(env, 0);
}

/* recvWatch(handle, fd) -> 0, or -errno: the handle's thread reads fd from now on. */
static napi_value recv_watch(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  struct receiver *r = receiver_at(env, argv[0]);
  return num(env, r == NULL ? -EINVAL : receiver_watch(r, int_at(env, argv[1], -1)));
}

/* recvUnwatch(handle, fd): the thread stops reading fd and drops its packets not taken, so its number may be reused. */
static napi_value recv_unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  receiver_unwatch(receiver_at(env, argv[0]), int_at(env, argv[1], -1));
  return num(env, 0);
}

/* recvPending(handle) -> packets the thread has read and not handed over yet (-EINVAL: stopped). */
static napi_value recv_pending(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  struct receiver *r = receiver_at(env, argv[0]);
  return num(env, r == NULL ? -EINVAL : (double)receiver_pending(r));
}

/*
 * recvTake(handle, out: Uint8Array, meta: Int32Array, arrivals: Float64Array) -> packets: what the thread
 * read since the last call (as many as the buffers hold), laid out as drain's, with each packet's socket
 * fd in meta[k * 4] where drain puts an index; -EINVAL for a stopped handle or a missing buffer.
 */
static napi_value recv_take(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  void *out, *meta, *arrivals;
  struct receiver *r = receiver_at(env, argv[0]);
  size_t out_len = typed_at(env, argv[1], &out);
  size_t meta_len = typed_at(env, argv[2], &meta);
  size_t arrivals_len = typed_at(env, argv[3], &arrivals);
  if (r == NULL || !out || !meta || !arrivals) return num(env, -EINVAL);
  return num(env, (double)receiver_take(r, out, meta, arrivals, read_capacity(out_len, meta_len, arrivals_len)));
}

/* The sender of this environment if it was ever started (close_socket must not start one). */
static struct sender *started_sender(napi_env env) {
  struct env_io *e = NULL;
  napi_get_instance_data(env, (void **)&e);
  return e == NULL ? NULL : e->sender;
}

/*
 * sendBatch(data: Uint8Array, meta: Int32Array, n, ioUring = true, async = false, notBeforeMs = 0) -> packets that failed.
 * Packet k is at data[k * SLOT]; meta[k * 4 ...] holds the socket fd, the length, the destination port
 * and address (port 0: the socket's connected peer, see connect_socket). A length may ask for the
 * payload (PCM16 after a 12-byte header) to be G.711-encoded first (g711.h: ENCODE_ALAW or
 * ENCODE_MULAW << 16; the tables set by g711Tables). With io_uring every
 * packet of the batch is one sendmsg entry of one submission (EAGAIN when a socket buffer is full,
 * never a wait). Synchronous: the result of each send replaces its length
 * (bytes sent, or -errno). async: the batch is copied and sent by the send thread (see send_loop), meta
 * is left as it was, and the result counts the failed packets of the batches sent since the last call;
 * notBeforeMs (CLOCK_MONOTONIC ms, async only) holds the batch, and every one behind it, until then.
 */
static napi_value send_batch(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  void *dataPtr, *metaPtr;
  size_t dataLen = typed_at(env, argv[0], &dataPtr);
  size_t metaLen = typed_at(env, argv[1], &metaPtr);
  int32_t n = int_at(env, argv[2], 0);
  bool use_ring = bool_at(env, argv[3], true);
  bool async = bool_at(env, argv[4], false);
  double not_before_ms = double_at(env, argv[5], 0);
  if (!dataPtr || !metaPtr || n < 0 || (size_t)n > dataLen / SLOT || (size_t)n > metaLen / META) return num(env, -EINVAL);
  unsigned char *data = dataPtr;
  int32_t *meta = metaPtr;
  for (int32_t k = 0; k < n; k++) {
    int32_t *m = meta + (size_t)k * META;
    if (!send_length_valid(m[1]) || m[2] < 0 || m[2] > 65535) return num(env, -EINVAL); /* port 0: the connected peer */
  }
  struct sender *s = async ? sender_of(env) : NULL;
  if (s != NULL) {
    long failed = queue_job(s, data, meta, (size_t)n, use_ring, not_before_ms > 0 ? not_before_ms : 0);
    if (failed >= 0) return num(env, (double)failed);
  }
  wait_sent(started_sender(env)); /* in order behind what the thread still holds */
  struct io_ring *ring = NULL;
#ifdef VOXBRIDGE_URING
  if (use_ring) ring = ring_of(env);
#endif
  return num(env, (double)send_packets(ring, data, meta, (size_t)n));
}

/* g711Tables(alaw: Uint8Array, mulaw: Uint8Array) -> true once the 65,536-entry encode tables are set. */
static napi_value g711_tables(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  void *alaw, *mulaw;
  size_t alaw_len = typed_at(env, argv[0], &alaw);
  size_t mulaw_len = typed_at(env, argv[1], &mulaw);
  napi_value out;
  napi_get_boolean(env, g711_set_tables(alaw, alaw_len, mulaw, mulaw_len), &out);
  return out;
}

/* sendWaits() -> how often a batch found the send thread's job buffers all queued and its caller waited. */
static napi_value send_waits(napi_env env, napi_callback_info info) {
  (void)info;
  return num(env, sender_figure(started_sender(env), true));
}

/* sendsQueued() -> batches the send thread still holds: a close now would wait for them. */
static napi_value sends_queued(napi_env env, napi_callback_info info) {
  (void)info;
  return num(env, sender_figure(started_sender(env), false));
}

/* ioUringReady() -> true when sendBatch and drain can go through io_uring (built with it, and the kernel allows it). */
static napi_value io_uring_ready(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
#ifdef VOXBRIDGE_URING
  napi_get_boolean(env, ring_of(env) != NULL, &out);
#else
  napi_get_boolean(env, false, &out);
#endif
  return out;
}

void read_clocks(struct drain_clocks *c) {
  struct timespec mono;
  clock_gettime(CLOCK_REALTIME, &c->wall);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  c->mono_ms = (double)mono.tv_sec * 1e3 + (double)mono.tv_nsec / 1e6;
}

/* Packet k of a read: which socket, its length (-1: truncated), the sender, and its kernel arrival time. */
static void record_packet(int32_t *meta, double *arrivals, size_t k, size_t socket, ssize_t len, const struct sockaddr_in *from, struct msghdr *h, const struct drain_clocks *now) {
  int32_t *m = meta + k * META;
  m[0] = (int32_t)socket;
  m[1] = (h->msg_flags & MSG_TRUNC) || len >= SLOT ? -1 : (int32_t)len;
  m[2] = ntohs(from->sin_port);
  m[3] = (int32_t)ntohl(from->sin_addr.s_addr);
  double arrival = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      struct timespec ts;
      memcpy(&ts, CMSG_DATA(c), sizeof ts);
      double age = (double)(now->wall.tv_sec - ts.tv_sec) * 1e3 + (double)(now->wall.tv_nsec - ts.tv_nsec) / 1e6;
      if (age < 0) age = 0; /* the wall clock stepped back: call it just arrived */
      arrival = now->mono_ms - age;
    }
  }
  arrivals[k] = arrival;
}

#ifdef VOXBRIDGE_URING
/*
 * Keeps, of the sockets fds[idx[0..n)], those with something to read (a packet, or a queued error that
 * a read clears), in order, in place; returns how many. One poll() for all of them: a read of an empty
 * socket costs as much as a read of a full one, and after a tick's round most sockets are empty again
 * (the second round of reads, all of them empty, was a third of the receive cost). `p` has room for n
 * entries (the ring's, grown with `active`: nothing is allocated per tick). On failure keeps all.
 */
static size_t keep_readable(const int32_t *fds, size_t *idx, struct pollfd *p, size_t n) {
  if (n == 0) return 0;
  for (size_t a = 0; a < n; a++) {
    p[a].fd = fds[idx[a]];
    p[a].events = POLLIN;
    p[a].revents = 0;
  }
  size_t kept = n;
  if (poll(p, (nfds_t)n, 0) >= 0) {
    kept = 0;
    for (size_t a = 0; a < n; a++)
      if (p[a].revents & (POLLIN | POLLERR)) idx[kept++] = idx[a];
  }
  return kept;
}

/*
 * The drain through io_uring: one recvmsg entry per readable socket (keep_readable), every socket of
 * a round in one submission (with recvmmsg each socket costs a system call even when, as usual, it
 * holds one packet). A socket that gave a packet is polled again for the next round, until none is
 * readable or the buffers are full. Packets are moved down over the slots of empty answers so that
 * they stay back to back. `once` (the receive thread, whose epoll set has just named the sockets ready):
 * no poll, one round. Returns the packets read, or -1 when nothing could be read this way (recvmmsg then).
 */
static long drain_ring(struct io_ring *r, const int32_t *fds, size_t nfds, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity, bool once,
                       const struct drain_clocks *now) {
  size_t nactive = nfds;
  if (nactive > r->active_cap) {
    size_t *grown = realloc(r->active, nactive * sizeof *grown);
    if (grown != NULL) r->active = grown;
    struct pollfd *polls = realloc(r->polls, nactive * sizeof *polls);
    if (polls != NULL) r->polls = polls;
    if (grown == NULL || polls == NULL) return -1;
    r->active_cap = nactive;
  }
  for (size_t a = 0; a < nactive; a++) r->active[a] = a;
  size_t k = 0;
  for (bool first = true;; first = false) {
    if (!(once && first)) nactive = keep_readable(fds, r->active, r->polls, nactive);
    if (nactive == 0 || k >= capacity) break;
    size_t still = 0;
    for (size_t pos = 0; pos < nactive && k < capacity;) {
      size_t chunk = nactive - pos;
      if (chunk > capacity - k) chunk = capacity - k;
      if (chunk > RING_ENTRIES) chunk = RING_ENTRIES;
      size_t queued = 0;
      for (; queued < chunk; queued++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
        if (sqe == NULL) break;
        point_msghdr(&r->hdr[queued], &r->iov[queued], out + (k + queued) * SLOT, SLOT, &r->addr[queued], r->control[queued]);
        io_uring_prep_recvmsg(sqe, fds[r->active[pos + queued]], &r->hdr[queued], MSG_DONTWAIT);
        io_uring_sqe_set_data64(sqe, queued);
      }
      if (queued == 0 || submit_and_reap(r, queued) < 0) return k > 0 ? (long)k : -1;
      size_t base = k;
      for (size_t j = 0; j < queued; j++) {
        if (r->res[j] < 0) continue; /* empty (EAGAIN), or an error such as a queued ICMP one */
        if (k != base + j) memmove(out + k * SLOT, out + (base + j) * SLOT, (size_t)r->res[j]);
        record_packet(meta, arrivals, k, r->active[pos + j], r->res[j], &r->addr[j], &r->hdr[j], now);
        k++;
        r->active[still++] = r->active[pos + j]; /* still <= pos + j: the list is rewritten in place */
      }
      pos += queued;
    }
    nactive = still;
    if (once) break;
  }
  return (long)k;
}
#endif

/*
 * drain(fds: Int32Array, out: Uint8Array, meta: Int32Array, arrivals: Float64Array, ioUring = true) -> packets.
 * Reads what is queued on every socket of fds (through io_uring, see drain_ring, else one recvmmsg
 * per socket) until every one is empty or the buffers are full (the caller then calls again). Packet k is at
 * out[k * SLOT]; meta[k * 4 ...] holds its socket's index in fds, its length (-1 when it did not fit
 * a slot), the sender's port and address; arrivals[k] when the kernel received it, in ms of
 * CLOCK_MONOTONIC (-1: no timestamp). An absolute time, not an age: an age counted from the drain's
 * start and dated by the caller after the drain returned was late by the drain's length, and by any
 * preemption in between.
 */
static napi_value drain(napi_env env, napi_callback_info info) {
  napi_value argv[MAX_ARGS];
  args(env, info, argv);
  void *fdsData, *outData, *metaData, *arrivalsData;
  size_t nfds = typed_at(env, argv[0], &fdsData);
  size_t outLen = typed_at(env, argv[1], &outData);
  size_t metaLen = typed_at(env, argv[2], &metaData);
  size_t arrivalsLen = typed_at(env, argv[3], &arrivalsData);
  bool use_ring = bool_at(env, argv[4], true);
  (void)use_ring; /* without liburing */
  if (!fdsData || !outData || !metaData || !arrivalsData) return num(env, -EINVAL);
  int32_t *fds = fdsData, *meta = metaData;
  double *arrivals = arrivalsData;
  unsigned char *out = outData;
  size_t capacity = read_capacity(outLen, metaLen, arrivalsLen);

  struct drain_clocks now;
  read_clocks(&now);
  struct io_ring *r = NULL;
#ifdef VOXBRIDGE_URING
  if (use_ring) r = ring_of(env);
#endif
  return num(env, (double)read_sockets(r, fds, nfds, out, meta, arrivals, capacity, false, &now));
}

size_t read_sockets(struct io_ring *r, const int32_t *fds, size_t nfds, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity, bool once,
                    const struct drain_clocks *now) {
#ifdef VOXBRIDGE_URING
  if (r != NULL) {
    long got = drain_ring(r, fds, nfds, out, meta, arrivals, capacity, once, now);
    if (got >= 0) return (size_t)got;
  }
#else
  (void)r;
#endif
  (void)once; /* a recvmmsg per socket reads what it holds in one call anyway */
  struct mmsghdr msgs[VLEN];
  struct iovec iov[VLEN];
  struct sockaddr_in from[VLEN];
  char control[VLEN][CONTROL_BYTES];
  size_t k = 0;
  for (size_t i = 0; i < nfds && k < capacity; i++) {
    for (;;) {
      size_t want = capacity - k < VLEN ? capacity - k : VLEN;
      if (want == 0) break;
      for (size_t j = 0; j < want; j++) {
        msgs[j].msg_len = 0;
        point_msghdr(&msgs[j].msg_hdr, &iov[j], out + (k + j) * SLOT, SLOT, &from[j], control[j]);
      }
      int n = recvmmsg(fds[i], msgs, (unsigned)want, MSG_DONTWAIT, NULL);
      if (n <= 0) break; /* empty (EAGAIN), or an error such as a queued ICMP one: the next tick reads on */
      for (int j = 0; j < n; j++) record_packet(meta, arrivals, k + (size_t)j, i, msgs[j].msg_len, &from[j], &msgs[j].msg_hdr, now);
      k += (size_t)n;
      if ((size_t)n < want) break; /* the queue is empty: no second call to find that out */
    }
  }
  return k;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, open_socket, NULL, NULL, NULL, napi_default, NULL},
      {"connect", NULL, connect_socket, NULL, NULL, NULL, napi_default, NULL},
      {"port", NULL, local_port, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_socket, NULL, NULL, NULL, napi_default, NULL},
      {"sendBatch", NULL, send_batch, NULL, NULL, NULL, napi_default, NULL},
      {"sendsQueued", NULL, sends_queued, NULL, NULL, NULL, napi_default, NULL},
      {"sendWaits", NULL, send_waits, NULL, NULL, NULL, napi_default, NULL},
      {"ioUringReady", NULL, io_uring_ready, NULL, NULL, NULL, napi_default, NULL},
      {"drain", NULL, drain, NULL, NULL, NULL, napi_default, NULL},
      {"recvStart", NULL, recv_start, NULL, NULL, NULL, napi_default, NULL},
      {"recvStop", NULL, recv_stop, NULL, NULL, NULL, napi_default, NULL},
      {"recvWatch", NULL, recv_watch, NULL, NULL, NULL, napi_default, NULL},
      {"recvUnwatch", NULL, recv_unwatch, NULL, NULL, NULL, napi_default, NULL},
      {"recvPending", NULL, recv_pending, NULL, NULL, NULL, napi_default, NULL},
      {"recvTake", NULL, recv_take, NULL, NULL, NULL, napi_default, NULL},
      {"g711Tables", NULL, g711_tables, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
