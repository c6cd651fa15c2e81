/*
 * What the send thread (send-thread.c) uses of rtp-io.c's packet I/O: the batch layout and the send of
 * one batch, through an io_uring of the calling thread's own or with one sendto per packet.
 */
#ifndef VOXBRIDGE_PACKET_IO_H
#define VOXBRIDGE_PACKET_IO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SLOT 2048 /* bytes per packet slot in the caller's buffer (RTP of any codec here fits) */
#define META 4    /* int32 per packet in `meta`: socket index (fd when sending), length (-1: truncated), port, address */

struct io_ring;

/* The ring behind *r, made on the first call; NULL (then and after) without io_uring. */
struct io_ring *ring_once(struct io_ring **r, bool *tried);
void free_ring(struct io_ring *r);

/*
 * The batch's packets through `r` (io_uring), or with one sendto each when r is NULL; each result
 * replaces its length in meta. Returns how many failed.
 */
long send_packets(struct io_ring *r, unsigned char *data, int32_t *meta, size_t n);
#endif
