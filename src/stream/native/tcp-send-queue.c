/*
 * The streaming socket's kernel send queue (src/stream/tcp-send-queue.ts). A client that stops reading,
 * or whose path slows down, leaves what the gateway writes in the kernel: a Linux TCP socket
 * takes up to its send buffer (autotuned up to net.ipv4.tcp_wmem's maximum, 4 MB by default: minutes of
 * 20 ms audio.output frames) before a write is refused, so the audio reaches the client late by that much
 * and Node's own buffer, where the gateway can see and drop it, stays empty. TCP_NOTSENT_LOWAT (Linux
 * 3.12) caps the bytes written but not yet sent: past it the socket is not writable, Node keeps the rest,
 * and the stream connection drops audio it cannot send in time (stream-connection.ts). Node has no API for
 * the option, hence this addon.
 *
 * It also writes audio.output frames straight to the socket (sendNow, used by direct-send.ts): one
 * send(2) from the caller's thread, without Node's stream machinery around each write, which cost the
 * event loop about as much again as the system call itself at 20,000 frames a second.
 *
 * And it reads them (pollCreate … recvReady, used by tick-reader.ts): one epoll instance for the stream
 * sockets taken from Node, asked without waiting at each media sub-tick, and one recv(2) per socket with
 * bytes waiting, all in one call, in place of a wake-up, a read and a stream event per client message.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <node_api.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static int32_t int_arg(napi_env env, napi_value *argv, size_t argc, size_t i) {
  int32_t v = -1;
  if (i < argc && napi_get_value_int32(env, argv[i], &v) != napi_ok) v = -1;
  return v;
}

static napi_value number(napi_env env, int32_t v) {
  napi_value out;
  napi_create_int32(env, v, &out);
  return out;
}

/* The call's first two arguments as int32s (-1 for one missing or not a number). */
static void two_ints(napi_env env, napi_callback_info info, int *first, int *second) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  *first = int_arg(env, argv, argc, 0);
  *second = int_arg(env, argv, argc, 1);
}

/* notSentLowat(fd, bytes) -> 0, or -errno. */
static napi_value not_sent_lowat(napi_env env, napi_callback_info info) {
  int fd, bytes;
  two_ints(env, info, &fd, &bytes);
  if (fd < 0 || bytes < 0) return number(env, -EINVAL);
  return number(env, setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes) == 0 ? 0 : -errno);
}

/*
 * sendNow(fd, buffer, length) -> bytes the kernel took of buffer's first `length` (possibly fewer), or -errno
 * (-EAGAIN: none). Never blocks (MSG_DONTWAIT) and never raises SIGPIPE (MSG_NOSIGNAL).
 */
static napi_value send_now(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = int_arg(env, argv, argc, 0);
  int length = int_arg(env, argv, argc, 2);
  void *data = NULL;
  size_t size = 0;
  if (argc < 2 || napi_get_buffer_info(env, argv[1], &data, &size) != napi_ok) return number(env, -EINVAL);
  if (fd < 0 || length < 0 || (size_t)length > size) return number(env, -EINVAL);
  ssize_t sent = send(fd, data, (size_t)length, MSG_DONTWAIT | MSG_NOSIGNAL);
  return number(env, sent < 0 ? -errno : (int32_t)sent);
}

/* Below ~4 KB of room, recvReady stops reading for this call (a message is ~400 bytes; more waits for the next). */
#define MIN_READ_ROOM 4096

/* pollCreate() -> an epoll descriptor for recvReady, or -errno. */
static napi_value poll_create(napi_env env, napi_callback_info info) {
  (void)info;
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  return number(env, epfd < 0 ? -errno : epfd);
}

/* pollAdd(epfd, fd) / pollRemove(epfd, fd) -> 0 or -errno. Level-triggered: bytes left unread are reported again. */
static napi_value poll_ctl(napi_env env, napi_callback_info info, int op) {
  int epfd, fd;
  two_ints(env, info, &epfd, &fd);
  if (epfd < 0 || fd < 0) return number(env, -EINVAL);
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
  return number(env, epoll_ctl(epfd, op, fd, &ev) == 0 ? 0 : -errno);
}
static napi_value poll_add(napi_env env, napi_callback_info info) { return poll_ctl(env, info, EPOLL_CTL_ADD); }
static napi_value poll_remove(napi_env env, napi_callback_info info) { return poll_ctl(env, info, EPOLL_CTL_DEL); }

/* pollClose(epfd) -> 0 or -errno. */
static napi_value poll_close(napi_env env, napi_callback_info info) {
  int epfd, unused;
  two_ints(env, info, &epfd, &unused);
  if (epfd < 0) return number(env, -EINVAL);
  return number(env, close(epfd) == 0 ? 0 : -errno);
}

/*
 * recvReady(epfd, into, fds, results, maxEach) -> how many descriptors were ready (or -errno). Asks epoll
 * which of its descriptors have something to read, without waiting, then reads each once, never blocking,
 * into `into` after the bytes before it (at most maxEach): fds[i] is the descriptor, results[i] the bytes
 * read, 0 at end of stream, or -errno (-EAGAIN: nothing after all; -ENOBUFS: not read, `into` was full:
 * still ready, so the next call reports it again).
 */
#define MAX_EVENTS 1024
static napi_value recv_ready(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int epfd = int_arg(env, argv, argc, 0);
  int max_each = int_arg(env, argv, argc, 4);
  void *buf = NULL, *fds_data = NULL, *res_data = NULL;
  size_t buf_len = 0, fds_len = 0, res_len = 0;
  napi_typedarray_type t1, t2;
  if (argc < 5 || epfd < 0 || max_each <= 0) return number(env, -EINVAL);
  if (napi_get_buffer_info(env, argv[1], &buf, &buf_len) != napi_ok) return number(env, -EINVAL);
  if (napi_get_typedarray_info(env, argv[2], &t1, &fds_len, &fds_data, NULL, NULL) != napi_ok || t1 != napi_int32_array) return number(env, -EINVAL);
  if (napi_get_typedarray_info(env, argv[3], &t2, &res_len, &res_data, NULL, NULL) != napi_ok || t2 != napi_int32_array) return number(env, -EINVAL);
  size_t room_for = fds_len < res_len ? fds_len : res_len;
  if (room_for > MAX_EVENTS) room_for = MAX_EVENTS;
  if (room_for == 0) return number(env, -EINVAL);
  struct epoll_event events[MAX_EVENTS];
  int ready = epoll_wait(epfd, events, (int)room_for, 0);
  if (ready < 0) return number(env, errno == EINTR ? 0 : -errno);
  int32_t *fds = fds_data;
  int32_t *results = res_data;
  size_t used = 0;
  for (int i = 0; i < ready; i++) {
    int fd = events[i].data.fd;
    fds[i] = fd;
    size_t room = buf_len - used;
    if (room < MIN_READ_ROOM) {
      results[i] = -ENOBUFS;
      continue;
    }
    size_t want = room < (size_t)max_each ? room : (size_t)max_each;
    ssize_t n = recv(fd, (char *)buf + used, want, MSG_DONTWAIT);
    results[i] = n < 0 ? -errno : (int32_t)n;
    if (n > 0) used += (size_t)n;
  }
  return number(env, ready);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"notSentLowat", NULL, not_sent_lowat, NULL, NULL, NULL, napi_default, NULL},
      {"sendNow", NULL, send_now, NULL, NULL, NULL, napi_default, NULL},
      {"pollCreate", NULL, poll_create, NULL, NULL, NULL, napi_default, NULL},
      {"pollAdd", NULL, poll_add, NULL, NULL, NULL, napi_default, NULL},
      {"pollRemove", NULL, poll_remove, NULL, NULL, NULL, napi_default, NULL},
      {"pollClose", NULL, poll_close, NULL, NULL, NULL, napi_default, NULL},
      {"recvReady", NULL, recv_ready, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
