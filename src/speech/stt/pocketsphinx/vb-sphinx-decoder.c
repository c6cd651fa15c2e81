/*
 * vb-sphinx-decoder: a long-lived streaming pocketsphinx decoder for voxbridge.
 *
 * Why this exists: Debian's pocketsphinx_continuous prints only final hypotheses, and the
 * session pipeline needs partial results while the caller is still talking. The model
 * (acoustic model, language model, dictionary) is loaded once per process; the TypeScript
 * pool (pocketsphinx-pool.ts) keeps a few of these alive and binds utterances to them.
 *
 * Protocol, stdin (binary records): 1 type byte, 4-byte little-endian payload length, payload.
 *   'S'  start an utterance            (length 0, or 4 * ceplen: float32 LE starting cepstral mean)
 *   'A'  audio: PCM16 LE mono 8 kHz    (length = 2 * samples)
 *   'E'  end the utterance             (length 0)  -> exactly one "final" line
 *   'Q'  quit                          (length 0)
 * Protocol, stdout (one JSON object per line, flushed):
 *   {"type":"ready","load_ms":N}
 *   {"type":"partial","text":"...","audio_ms":N}     at most every partial_ms of audio, only when changed;
 *      audio_ms: the utterance's audio decoded when the hypothesis was taken
 *   {"type":"progress","text":"...","audio_ms":N,"stable_ms":N}
 *      once per utterance, on 'E', after all its audio is decoded and before the end-of-utterance
 *      search: the first-pass hypothesis over the whole utterance, and how much audio (at least) it
 *      has stayed unchanged for. Lets the agent answer without waiting for the final's search.
 *   {"type":"final","text":"...","confidence":F,"audio_ms":N,"decode_ms":N,"end_ms":N,"cmn":[F,...]}
 *      cmn: the cepstral mean after the utterance; send it back with the stream's next 'S'.
 *   {"type":"error","message":"..."}
 * Diagnostics go to stderr (pocketsphinx logs there too, silenced with -logfn /dev/null).
 *
 * Usage: vb-sphinx-decoder [-partial_ms N] <pocketsphinx args: -hmm DIR -lm FILE -dict FILE ...>
 */
#include <pocketsphinx.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PAYLOAD (1 << 20)
#define SAMPLE_RATE 8000
/* The hypothesis is checked this often (audio) to know how long it has been stable; partial lines
 * still go out at most every partial_ms. */
#define HYP_CHECK_MS 100

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Writes s as a JSON string literal (hypotheses are plain words, but be safe). */
static void put_json_string(const char *s) {
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { putchar('\\'); putchar(c); }
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static int read_exact(void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        size_t r = fread((char *)buf + got, 1, n - got, stdin);
        if (r == 0) return -1;
        got += r;
    }
    return 0;
}

static void emit_error(const char *msg) {
    printf("{\"type\":\"error\",\"message\":");
    put_json_string(msg);
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    int partial_ms = 250;
    /* Strip our own options before handing the rest to pocketsphinx. */
    char **ps_argv = calloc((size_t)argc + 1, sizeof(char *));
    int ps_argc = 0;
    ps_argv[ps_argc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-partial_ms") == 0 && i + 1 < argc) {
            partial_ms = atoi(argv[++i]);
        } else {
            ps_argv[ps_argc++] = argv[i];
        }
    }

    double t0 = now_ms();
    cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), ps_argc, ps_argv, TRUE);
    if (config == NULL) {
        emit_error("bad decoder arguments");
        return 2;
    }
    ps_decoder_t *ps = ps_init(config);
    if (ps == NULL) {
        emit_error("cannot load the model (check -hmm, -lm, -dict)");
        return 3;
    }
    /* Cepstral mean normalization adapts to the caller's channel. Decoders are shared by all
     * sessions, so the adapted mean belongs to the stream, not the process: each utterance starts
     * from the mean its stream sent in the START record (returned with its previous final), or
     * from the model's -cmninit for a stream's first utterance. Results then do not depend on
     * which pooled decoder serves an utterance or on who spoke on it before. */
    feat_t *fcb = ps_get_feat(ps);
    int ceplen = feat_cepsize(fcb);
    mfcc_t *cmn_init_mean = calloc((size_t)ceplen, sizeof(mfcc_t));
    mfcc_t *cmn_vec = calloc((size_t)ceplen, sizeof(mfcc_t));
    cmn_live_get(fcb->cmn_struct, cmn_init_mean);
    printf("{\"type\":\"ready\",\"load_ms\":%.0f}\n", now_ms() - t0);
    fflush(stdout);

    int16_t *samples = malloc(MAX_PAYLOAD);
    int in_utt = 0;
    long samples_since_check = 0;
    long samples_at_partial = 0; /* utt_samples when the last partial line went out */
    long hyp_since = 0;          /* utt_samples at the check that first saw the current hypothesis */
    long utt_samples = 0;
    double utt_cpu_ms = 0;
    char *last_hyp = NULL;     /* hypothesis at the last check */
    char *last_partial = NULL; /* text of the last partial line */
    const long partial_every = (long)partial_ms * SAMPLE_RATE / 1000;
    const long check_every = (long)HYP_CHECK_MS * SAMPLE_RATE / 1000;

    for (;;) {
        unsigned char head[5];
        if (read_exact(head, 5) < 0) break; /* stdin closed: the pool is gone */
        uint32_t len = (uint32_t)head[1] | ((uint32_t)head[2] << 8) | ((uint32_t)head[3] << 16) | ((uint32_t)head[4] << 24);
        if (len > MAX_PAYLOAD) {
            emit_error("record too large");
            return 4;
        }
        if (len > 0 && read_exact(samples, len) < 0) break;

        switch (head[0]) {
        case 'S':
            if (in_utt) ps_end_utt(ps);
            if (len == (uint32_t)ceplen * 4) {
                const float *mean = (const float *)samples; /* float32 LE, like the audio */
                for (int i = 0; i < ceplen; i++) cmn_vec[i] = FLOAT2MFCC(mean[i]);
                cmn_live_set(fcb->cmn_struct, cmn_vec);
            } else {
                cmn_live_set(fcb->cmn_struct, cmn_init_mean);
            }
            ps_start_utt(ps);
            in_utt = 1;
            samples_since_check = 0;
            samples_at_partial = 0;
            hyp_since = 0;
            utt_samples = 0;
            utt_cpu_ms = 0;
            free(last_partial);
            last_partial = NULL;
            free(last_hyp);
            last_hyp = NULL;
            break;
        case 'A': {
            if (!in_utt) { ps_start_utt(ps); in_utt = 1; }
            size_t n = len / 2;
            double t = now_ms();
            ps_process_raw(ps, samples, n, FALSE, FALSE);
            utt_cpu_ms += now_ms() - t;
            utt_samples += (long)n;
            samples_since_check += (long)n;
            if (samples_since_check >= check_every) {
                samples_since_check = 0;
                int32 score;
                char const *hyp = ps_get_hyp(ps, &score);
                if (hyp == NULL) hyp = "";
                if (last_hyp == NULL || strcmp(hyp, last_hyp) != 0) {
                    /* Changed somewhere since the previous check: counting from this check
                     * understates how long it has been stable, never overstates it. */
                    free(last_hyp);
                    last_hyp = strdup(hyp);
                    hyp_since = utt_samples;
                }
                if (*hyp && utt_samples - samples_at_partial >= partial_every &&
                    (last_partial == NULL || strcmp(hyp, last_partial) != 0)) {
                    samples_at_partial = utt_samples;
                    free(last_partial);
                    last_partial = strdup(hyp);
                    printf("{\"type\":\"partial\",\"text\":");
                    put_json_string(hyp);
                    printf(",\"audio_ms\":%ld}\n", utt_samples * 1000 / SAMPLE_RATE);
                    fflush(stdout);
                }
            }
            break;
        }
        case 'E': {
            if (in_utt) {
                /* Everything sent before 'E' is decoded by now (records are handled in order). */
                int32 score;
                char const *hyp = ps_get_hyp(ps, &score);
                if (hyp == NULL) hyp = "";
                long stable = (last_hyp != NULL && strcmp(hyp, last_hyp) == 0) ? utt_samples - hyp_since : 0;
                printf("{\"type\":\"progress\",\"text\":");
                put_json_string(hyp);
                printf(",\"audio_ms\":%ld,\"stable_ms\":%ld}\n", utt_samples * 1000 / SAMPLE_RATE, stable * 1000 / SAMPLE_RATE);
                fflush(stdout);
            }
            double t = now_ms();
            if (!in_utt) { ps_start_utt(ps); }
            ps_end_utt(ps);
            in_utt = 0;
            int32 score;
            char const *hyp = ps_get_hyp(ps, &score);
            /* Posterior probability of the best path from the lattice; log domain -> [0,1]. */
            double conf = 0;
            if (hyp && *hyp) {
                conf = logmath_exp(ps_get_logmath(ps), ps_get_prob(ps));
                if (conf < 0) conf = 0;
                if (conf > 1) conf = 1;
            }
            double end_ms = now_ms() - t;
            printf("{\"type\":\"final\",\"text\":");
            put_json_string(hyp ? hyp : "");
            printf(",\"confidence\":%.3f,\"audio_ms\":%ld,\"decode_ms\":%.1f,\"end_ms\":%.1f,\"cmn\":[",
                   conf, utt_samples * 1000 / SAMPLE_RATE, utt_cpu_ms + end_ms, end_ms);
            cmn_live_get(fcb->cmn_struct, cmn_vec);
            for (int i = 0; i < ceplen; i++) printf("%s%.5f", i ? "," : "", (double)MFCC2FLOAT(cmn_vec[i]));
            printf("]}\n");
            fflush(stdout);
            free(last_partial);
            last_partial = NULL;
            free(last_hyp);
            last_hyp = NULL;
            break;
        }
        case 'Q':
            goto done;
        default:
            emit_error("unknown record type");
            break;
        }
    }
done:
    if (in_utt) ps_end_utt(ps);
    free(last_partial);
    free(last_hyp);
    free(samples);
    free(cmn_init_mean);
    free(cmn_vec);
    free(ps_argv);
    ps_free(ps);
    cmd_ln_free_r(config);
    return 0;
}
