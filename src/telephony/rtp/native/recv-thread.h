/* The addon's receive thread (recv-thread.c): RTP sockets read off the event loop, handed over per tick. */
#ifndef VOXBRIDGE_RECV_THREAD_H
#define VOXBRIDGE_RECV_THREAD_H
#include <stddef.h>
#include <stdint.h>

struct receiver;

/* A started receive thread, or NULL when it cannot start. */
struct receiver *start_receiver(void);
/* Stops and joins the thread, and frees it (packets not taken are dropped). NULL: nothing. */
void stop_receiver(struct receiver *r);
/* Reads fd from now on; 0 or -errno. */
int receiver_watch(struct receiver *r, int fd);
/* Stops reading fd and drops its packets not yet taken: after this its number may be reused. NULL: nothing. */
void receiver_unwatch(struct receiver *r, int fd);
/*
 * Moves up to `capacity` of the packets read since the last call into the caller's buffers, oldest
 * first, laid out as a drain lays them out (packet-io.h) but with the socket's fd where a drain puts
 * its index. Returns how many.
 */
/* Packets read and not yet taken. */
size_t receiver_pending(struct receiver *r);
size_t receiver_take(struct receiver *r, unsigned char *out, int32_t *meta, double *arrivals, size_t capacity);
#endif
