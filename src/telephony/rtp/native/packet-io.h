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
#include <time.h>

#define SLOT 2048 /* bytes per packet slot in the caller's buffer (RTP of any codec here fits) */
#define META 4    /* int32 per packet in `meta`: socket index (fd when sending), length (-1: truncated), port, address */

struct io_ring;

/* The two clocks read together before a round of reads: the kernel stamps packets on the wall clock, the
 * caller dates them on the monotonic one (process.hrtime's and performance.now()'s). */
struct drain_clocks {
  struct timespec wall;
  double mono_ms;
};
void read_clocks(struct drain_clocks *c);
/*
 * Reads what is queued on the sockets fds[0..nfds) into out/meta/arrivals (at most `capacity` packets;
 * meta[k * META] the socket's index in fds): through `r` (io_uring: one submission per round of reads,
 * each round's sockets polled first) when not NULL and it works, else one recvmmsg per socket. `once`:
 * the sockets are known readable (epoll said so): one read each, no poll; what is left is reported again.
 * Returns the packets read.
 */
size_t read_sockets(struct io_ring *r, const int32_t *fds, size_t nfds, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity, bool once,
                    const struct drain_clocks *now);

/* The ring behind *r, made on the first call; NULL (then and after) without io_uring. */
struct io_ring *ring_once(struct io_ring **r, bool *tried);
void free_ring(struct io_ring *r);

/*
 * The batch's packets through `r` (io_uring), or with one sendto each when r is NULL; each result
 * replaces its length in meta. Returns how many failed.
 */
long send_packets(struct io_ring *r, unsigned char *data, int32_t *meta, size_t n);
#endif
