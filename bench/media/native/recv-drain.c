/*
 * Bench-only prototype (bench/media/recv-cost.ts), not part of the gateway: UDP sockets opened here and
 * read once per media tick with recvmmsg, every packet copied into one caller-owned buffer, so the
 * receive side pays one system call per socket per tick and no JavaScript object per datagram.
 * Built by the bench with: cc -O2 -shared -fPIC -I<node headers> recv-drain.c -o recv-drain.node
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <node_api.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SLOT 2048 /* bytes per packet slot in the caller's buffer */
#define VLEN 16   /* packets per recvmmsg call */

static napi_value num(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

/* The first argument as an int32 (-1 when missing or not a number). */
static int32_t int_arg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t v = -1;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc > 0) napi_get_value_int32(env, argv[0], &v);
  return v;
}

/* open(port) -> fd, or -errno: a non-blocking UDP socket bound to 127.0.0.1:port (0: any free port). */
static napi_value open_socket(napi_env env, napi_callback_info info) {
  int32_t port = int_arg(env, info);
  if (port < 0) port = 0;
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return num(env, -errno);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    close(fd);
    return num(env, -e);
  }
  return num(env, fd);
}

/* port(fd) -> the bound port. */
static napi_value local_port(napi_env env, napi_callback_info info) {
  int32_t fd = int_arg(env, info);
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  if (getsockname(fd, (struct sockaddr *)&a, &len) < 0) return num(env, -errno);
  return num(env, ntohs(a.sin_port));
}

static napi_value close_socket(napi_env env, napi_callback_info info) {
  int32_t fd = int_arg(env, info);
  return num(env, close(fd) < 0 ? -errno : 0);
}

/*
 * drain(fds: Int32Array, out: Uint8Array, lens: Int32Array) -> packets read. Reads every queued
 * datagram of every socket (up to out.length / SLOT in all): packet k is at out[k * SLOT], its length
 * in lens[k]. Errors other than "nothing queued" end that socket's read.
 */
static napi_value drain(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *fdsData, *outData, *lensData;
  size_t nfds, outLen, nlens;
  napi_get_typedarray_info(env, argv[0], NULL, &nfds, &fdsData, NULL, NULL);
  napi_get_typedarray_info(env, argv[1], NULL, &outLen, &outData, NULL, NULL);
  napi_get_typedarray_info(env, argv[2], NULL, &nlens, &lensData, NULL, NULL);
  int32_t *fds = fdsData, *lens = lensData;
  unsigned char *out = outData;
  size_t capacity = outLen / SLOT < nlens ? outLen / SLOT : nlens;
  size_t k = 0;
  struct mmsghdr msgs[VLEN];
  struct iovec iov[VLEN];
  for (size_t i = 0; i < nfds && k < capacity; i++) {
    for (;;) {
      size_t want = capacity - k < VLEN ? capacity - k : VLEN;
      if (want == 0) break;
      memset(msgs, 0, sizeof(msgs[0]) * want);
      for (size_t j = 0; j < want; j++) {
        iov[j].iov_base = out + (k + j) * SLOT;
        iov[j].iov_len = SLOT;
        msgs[j].msg_hdr.msg_iov = &iov[j];
        msgs[j].msg_hdr.msg_iovlen = 1;
      }
      int n = recvmmsg(fds[i], msgs, (unsigned)want, MSG_DONTWAIT, NULL);
      if (n <= 0) break;
      for (int j = 0; j < n; j++) lens[k + j] = (int32_t)msgs[j].msg_len;
      k += (size_t)n;
      if ((size_t)n < want) break; /* the queue is empty: no second call to find that out */
    }
  }
  return num(env, (double)k);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"open", NULL, open_socket, NULL, NULL, NULL, napi_default, NULL},
      {"port", NULL, local_port, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, close_socket, NULL, NULL, NULL, napi_default, NULL},
      {"drain", NULL, drain, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
