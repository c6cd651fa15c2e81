/*
 * What the send and receive threads (send-thread.c, recv-thread.c) use of rtp-io.c's packet I/O: the
 * batch layout, the send of one batch (through an io_uring of the calling thread's own or with one
 * sendto per packet), and the reading of packets with their kernel arrival times.
 */
#ifndef VOXBRIDGE_PACKET_IO_H
#define VOXBRIDGE_PACKET_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#define SLOT 2048 /* bytes per packet slot in the caller's buffer (RTP of any codec here fits) */
#define META 4    /* int32 per packet in `meta`: socket index (fd when sending), length (-1: truncated), port, address */

#define RECV_VLEN 16 /* packets per recvmmsg call */
#define CONTROL_BYTES CMSG_SPACE(sizeof(struct timespec)) /* room for SCM_TIMESTAMPNS */

struct io_ring;

/* The two clocks read together before a round of reads: the kernel stamps packets on the wall clock, the
 * caller dates them on the monotonic one (process.hrtime's and performance.now()'s). */
struct drain_clocks {
  struct timespec wall;
  double mono_ms;
};
void read_clocks(struct drain_clocks *c);
/* Points `h` at one buffer, an address, and (for reads; NULL for sends) a zeroed control buffer. */
void point_msghdr(struct msghdr *h, struct iovec *iov, void *buf, size_t len, struct sockaddr_in *name, char *control);
/*
 * Reads what is queued on the sockets fds[0..nfds) into out/meta/arrivals (at most `capacity` packets;
 * meta[k * META] the socket's index in fds): through `r` (io_uring: one submission per round of reads,
 * each round's sockets polled first) when not NULL and it works, else one recvmmsg per socket. `once`:
 * the sockets are known readable (epoll said so): one read each, no poll; what is left is reported again.
 * Returns the packets read.
 */
size_t read_sockets(struct io_ring *r, const int32_t *fds, size_t nfds, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity, bool once,
                    const struct drain_clocks *now);
/* Packet k of a read: which socket, its length (-1: truncated), the sender, and its kernel arrival time. */
void record_packet(int32_t *meta, double *arrivals, size_t k, size_t socket, ssize_t len, const struct sockaddr_in *from, struct msghdr *h, const struct drain_clocks *now);

/* The ring behind *r, made on the first call; NULL (then and after) without io_uring. */
struct io_ring *ring_once(struct io_ring **r, bool *tried);
void free_ring(struct io_ring *r);

/*
 * The batch's packets through `r` (io_uring), or with one sendto each when r is NULL; each result
 * replaces its length in meta. Returns how many failed.
 */
long send_packets(struct io_ring *r, unsigned char *data, int32_t *meta, size_t n);
#endif
