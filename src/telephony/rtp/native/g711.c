/* G.711 encoding of outgoing RTP payloads: see g711.h. */
#include "g711.h"
#include <pthread.h>
#include <string.h>
#include "packet-io.h"

#define TABLE 65536

static uint8_t alaw_table[TABLE];
static uint8_t mulaw_table[TABLE];
/* Written once, before any batch that asks for encoding is accepted (send_batch checks), and never
 * again: every addon instance of the process (one per worker thread that loads it) shares them. */
static bool tables_set = false;
static pthread_mutex_t tables_mu = PTHREAD_MUTEX_INITIALIZER;

bool g711_set_tables(const uint8_t *alaw, size_t alaw_len, const uint8_t *mulaw, size_t mulaw_len) {
  if (alaw == NULL || mulaw == NULL || alaw_len < TABLE || mulaw_len < TABLE) return false;
  pthread_mutex_lock(&tables_mu);
  if (!__atomic_load_n(&tables_set, __ATOMIC_ACQUIRE)) { /* else the same tables (one builder), in use */
    memcpy(alaw_table, alaw, TABLE);
    memcpy(mulaw_table, mulaw, TABLE);
    __atomic_store_n(&tables_set, true, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&tables_mu);
  return true;
}

bool send_length_valid(int32_t v) {
  if (v < 0) return false;
  int32_t bytes = LEN_BYTES(v), encode = LEN_ENCODE(v);
  if (bytes > SLOT || encode > ENCODE_MULAW) return false;
  if (encode == ENCODE_NONE) return true;
  return __atomic_load_n(&tables_set, __ATOMIC_ACQUIRE) && bytes >= RTP_HEADER && (bytes - RTP_HEADER) % 2 == 0;
}

/* Byte i of the payload goes where sample i's first byte was: never past a sample not yet read. */
static int32_t encode_payload(unsigned char *packet, int32_t bytes, const uint8_t *table) {
  unsigned char *payload = packet + RTP_HEADER;
  int32_t samples = (bytes - RTP_HEADER) / 2;
  for (int32_t i = 0; i < samples; i++) {
    int16_t s;
    memcpy(&s, payload + 2 * i, sizeof s); /* host order, as the caller's Int16Array wrote it */
    payload[i] = table[(uint16_t)s];
  }
  return RTP_HEADER + samples;
}

void g711_encode_batch(unsigned char *data, int32_t *meta, size_t n) {
  for (size_t k = 0; k < n; k++) {
    int32_t *len = meta + k * META + 1;
    int32_t encode = LEN_ENCODE(*len);
    if (encode == ENCODE_NONE) continue;
    *len = encode_payload(data + k * SLOT, LEN_BYTES(*len), encode == ENCODE_ALAW ? alaw_table : mulaw_table);
  }
}
