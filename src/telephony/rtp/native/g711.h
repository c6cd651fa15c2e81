/*
 * G.711 encoding of outgoing RTP payloads (g711.c): a packet of a send batch may carry its payload as
 * PCM16 samples, which become A-law or µ-law bytes just before it is sent, on the send thread when
 * there is one. The tables come from the caller (src/media/g711.ts builds them), so both sides encode
 * every sample the same way.
 */
#ifndef VOXBRIDGE_G711_H
#define VOXBRIDGE_G711_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTP_HEADER 12 /* the gateway's own packets: no CSRC, no extension */
#define ENCODE_NONE 0
#define ENCODE_ALAW 1
#define ENCODE_MULAW 2

/* meta[k * META + 1] of a packet to send: its length in the low 16 bits, what to encode above them. */
#define LEN_BYTES(v) ((v) & 0xffff)
#define LEN_ENCODE(v) ((v) >> 16)

/* Copies the two 65,536-entry tables (indexed by the sample as uint16); false when either is short. */
bool g711_set_tables(const uint8_t *alaw, size_t alaw_len, const uint8_t *mulaw, size_t mulaw_len);
/* Whether a send's length word is acceptable: a plain length up to SLOT, or a known encoding (tables
 * set) of an even PCM payload after the header. */
bool send_length_valid(int32_t v);
/* Encodes, in place, the packets of a batch that ask for it; their length words become plain lengths. */
void g711_encode_batch(unsigned char *data, int32_t *meta, size_t n);
#endif
