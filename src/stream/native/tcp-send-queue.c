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
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <node_api.h>
#include <stdint.h>
#include <sys/socket.h>

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

/* notSentLowat(fd, bytes) -> 0, or -errno. */
static napi_value not_sent_lowat(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int fd = int_arg(env, argv, argc, 0);
  int bytes = int_arg(env, argv, argc, 1);
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

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"notSentLowat", NULL, not_sent_lowat, NULL, NULL, NULL, napi_default, NULL},
      {"sendNow", NULL, send_now, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
