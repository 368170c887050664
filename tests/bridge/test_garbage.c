/*
 * Bytes that are not a message: the decoders return NULL with the garbage
 * message, never crash. Random bodies, hand-made invalid wire types, and
 * (decode_random) mutations of real messages, both decoded directly and
 * streamed through hs_frame_reader in random chunks.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "bridge_test.h"

static char err[512];

/* Decodes with both decoders; returns how many gave NULL (each with the right message). */
static int decode_both(const uint8_t *b, size_t n)
{
    char want[128];
    int nulls = 0;
    err[0] = '\0';
    Hysim__ClientMsg *m = hs_frame_decode_client_msg(b, n, err, sizeof err);
    if (m) {
        hysim__client_msg__free_unpacked(m, NULL);
    } else {
        snprintf(want, sizeof want, "garbage frame: %zu bytes do not decode as hysim.ClientMsg", n);
        CHECK(strcmp(err, want) == 0, "message \"%s\"", err);
        nulls++;
    }
    err[0] = '\0';
    Hysim__Reply *r = hs_frame_decode_reply(b, n, err, sizeof err);
    if (r) {
        hysim__reply__free_unpacked(r, NULL);
    } else {
        snprintf(want, sizeof want, "garbage frame: %zu bytes do not decode as hysim.Reply", n);
        CHECK(strcmp(err, want) == 0, "message \"%s\"", err);
        nulls++;
    }
    return nulls;
}

static void case_garbage_random(void)
{
    uint64_t seed = 0x5eed0001;
    const int iters = 10000;
    int nulls = 0;
    uint8_t *b = malloc(4096);
    CHECK(b, "malloc");
    for (int i = 0; i < iters; i++) {
        /* Mostly short bodies, some long ones. */
        size_t n = 1 + bt_rand(&seed) % (i % 10 == 0 ? 4096 : 64);
        for (size_t k = 0; k < n; k++)
            b[k] = (uint8_t)bt_rand(&seed);
        nulls += decode_both(b, n);
    }
    free(b);
    printf("%d of %d random decodes refused\n", nulls, 2 * iters);
    /* Random bytes are rarely a message; if most decode, the decoder is not checking. */
    CHECK(nulls > iters, "only %d of %d random bodies were refused", nulls, 2 * iters);
}

struct bad {
    const char *what;
    const char *bytes;
    size_t len;
};
#define BAD(what, s)          \
    {                         \
        what, s, sizeof s - 1 \
    }

static void case_garbage_wire_types(void)
{
    static const struct bad client[] = {
        BAD("start group (wire type 3)", "\x0b"),
        BAD("end group (wire type 4)", "\x0c"),
        BAD("wire type 6", "\x0e\x00\x00\x00\x00\x00\x00\x00\x00"),
        BAD("wire type 7", "\x0f\x00\x00\x00\x00"),
        BAD("field number 0", "\x00\x00"),
        BAD("length past the end", "\x0a\x05\x01"),
        BAD("length overflowing 32 bits", "\x0a\xff\xff\xff\xff\x0f"),
        BAD("tag without a value", "\x08"),
        BAD("varint of 11 bytes", "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"),
        BAD("truncated fixed32", "\x0d\x01\x02"),
        BAD("truncated fixed64", "\x09\x01"),
        BAD("varint where Register is expected", "\x08\x01"),
        BAD("fixed32 where Register is expected", "\x0d\x01\x02\x03\x04"),
        BAD("varint where Wait is expected", "\x18\x01"),
        BAD("wire type 7 inside Register", "\x0a\x01\x0f"),
        BAD("wire type 7 inside Batch.Op", "\x12\x03\x0a\x01\x07"),
        BAD("group inside Bye", "\x22\x02\x0b\x0c"),
    };
    static const struct bad reply[] = {
        BAD("start group", "\x0b"),
        BAD("wire type 7", "\x0f"),
        BAD("varint where the error string is expected", "\x18\x01"),
        BAD("fixed32 where the error string is expected", "\x1d\x00\x00\x00\x00"),
        BAD("wire type 7 inside Setup", "\x22\x01\x0f"),
        BAD("EventTime longer than the frame", "\x2a\x02\x08"),
        BAD("now_ns varint of 11 bytes", "\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"),
    };
    char want[128];
    for (size_t i = 0; i < sizeof client / sizeof client[0]; i++) {
        err[0] = '\0';
        Hysim__ClientMsg *m =
            hs_frame_decode_client_msg((const uint8_t *)client[i].bytes, client[i].len, err, sizeof err);
        CHECK(!m, "ClientMsg with %s decoded", client[i].what);
        snprintf(want, sizeof want, "garbage frame: %zu bytes do not decode as hysim.ClientMsg", client[i].len);
        CHECK(strcmp(err, want) == 0, "%s: message \"%s\"", client[i].what, err);
    }
    for (size_t i = 0; i < sizeof reply / sizeof reply[0]; i++) {
        err[0] = '\0';
        Hysim__Reply *m = hs_frame_decode_reply((const uint8_t *)reply[i].bytes, reply[i].len, err, sizeof err);
        CHECK(!m, "Reply with %s decoded", reply[i].what);
        snprintf(want, sizeof want, "garbage frame: %zu bytes do not decode as hysim.Reply", reply[i].len);
        CHECK(strcmp(err, want) == 0, "%s: message \"%s\"", reply[i].what, err);
    }
}

/* ---- decode_random: mutated real messages ---- */

/* Touches every string and nested message so the sanitizers see any bad pointer. */
static size_t walk_client(const Hysim__ClientMsg *m)
{
    size_t s = 0;
    switch (m->msg_case) {
    case HYSIM__CLIENT_MSG__MSG_REGISTER: s += strlen(m->register_->program); break;
    case HYSIM__CLIENT_MSG__MSG_BATCH:
        for (size_t i = 0; i < m->batch->n_ops; i++) {
            const Hysim__Op *op = m->batch->ops[i];
            s += op->host_ns + (size_t)op->kind_case;
            if (op->kind_case == HYSIM__OP__KIND_KERNEL)
                s += strlen(op->kernel->name);
            if (op->kind_case == HYSIM__OP__KIND_COLLECTIVE)
                s += (size_t)op->collective->kind;
        }
        break;
    case HYSIM__CLIENT_MSG__MSG_WAIT:
        for (size_t i = 0; i < m->wait->n_timed_events; i++)
            s += m->wait->timed_events[i];
        break;
    case HYSIM__CLIENT_MSG__MSG_BYE:
        for (size_t i = 0; i < m->bye->n_peak_memory_bytes; i++)
            s += m->bye->peak_memory_bytes[i];
        break;
    default: break;
    }
    return s;
}

static size_t walk_reply(const Hysim__Reply *r)
{
    size_t s = strlen(r->error);
    if (r->setup)
        s += strlen(r->setup->gpu_model);
    for (size_t i = 0; i < r->n_event_times; i++)
        s += r->event_times[i]->time_ps;
    return s;
}

/* Applies 1..8 random edits to b (length *n, capacity cap). */
static void mutate(uint8_t *b, size_t *n, size_t cap, uint64_t *seed)
{
    int edits = 1 + (int)(bt_rand(seed) % 8);
    for (int e = 0; e < edits; e++) {
        size_t len = *n;
        size_t at = len ? bt_rand(seed) % len : 0;
        switch (bt_rand(seed) % 6) {
        case 0: /* flip a bit */
            if (len)
                b[at] ^= (uint8_t)(1u << (bt_rand(seed) % 8));
            break;
        case 1: /* set a byte, often to an interesting value */
            if (len) {
                static const uint8_t vals[] = {0x00, 0x7f, 0x80, 0xff, 0x0f, 0x0b, 0x0c, 0x0a};
                b[at] = bt_rand(seed) % 2 ? vals[bt_rand(seed) % 8] : (uint8_t)bt_rand(seed);
            }
            break;
        case 2: /* insert a byte */
            if (len < cap) {
                memmove(b + at + 1, b + at, len - at);
                b[at] = (uint8_t)bt_rand(seed);
                (*n)++;
            }
            break;
        case 3: /* delete a byte */
            if (len) {
                memmove(b + at, b + at + 1, len - at - 1);
                (*n)--;
            }
            break;
        case 4: /* truncate */ *n = at; break;
        case 5: { /* duplicate a chunk */
            size_t k = 1 + bt_rand(seed) % 16;
            if (at + k <= len && len + k <= cap) {
                memmove(b + at + 2 * k, b + at + k, len - at - k);
                memcpy(b + at + k, b + at, k);
                *n += k;
            }
            break;
        }
        }
    }
}

struct sample {
    const ProtobufCMessage *m;
    int is_reply;
};

/* Decodes a (possibly mutated) body as the sample's type; a decoded message
 * must survive re-encoding and decode to the same thing again. Returns 1 if refused. */
static int check_body(const uint8_t *b, size_t n, int is_reply)
{
    if (!is_reply) {
        Hysim__ClientMsg *m = hs_frame_decode_client_msg(b, n, err, sizeof err);
        if (!m) {
            CHECK(strstr(err, "garbage frame") && strstr(err, "hysim.ClientMsg"), "%s", err);
            return 1;
        }
        (void)walk_client(m);
        size_t pn;
        uint8_t *p = bt_pack(&m->base, &pn);
        Hysim__ClientMsg *m2 = hs_frame_decode_client_msg(p, pn, err, sizeof err);
        CHECK(m2, "re-encoded ClientMsg does not decode: %s", err);
        CHECK(bt_same_message(&m->base, &m2->base), "ClientMsg changes on re-encoding");
        hysim__client_msg__free_unpacked(m2, NULL);
        hysim__client_msg__free_unpacked(m, NULL);
        free(p);
    } else {
        Hysim__Reply *m = hs_frame_decode_reply(b, n, err, sizeof err);
        if (!m) {
            CHECK(strstr(err, "garbage frame") && strstr(err, "hysim.Reply"), "%s", err);
            return 1;
        }
        (void)walk_reply(m);
        size_t pn;
        uint8_t *p = bt_pack(&m->base, &pn);
        Hysim__Reply *m2 = hs_frame_decode_reply(p, pn, err, sizeof err);
        CHECK(m2, "re-encoded Reply does not decode: %s", err);
        CHECK(bt_same_message(&m->base, &m2->base), "Reply changes on re-encoding");
        hysim__reply__free_unpacked(m2, NULL);
        hysim__reply__free_unpacked(m, NULL);
        free(p);
    }
    return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Reference parse of a frame stream: offsets and lengths of the whole frames
 * before the first bad length or the end. Returns the frame count; *bad says
 * whether it stopped at an out-of-range length.
 */
static int ref_frames(const uint8_t *s, size_t n, size_t *off, size_t *len, int max, int *bad)
{
    size_t at = 0;
    int k = 0;
    *bad = 0;
    while (k < max && n - at >= 4) {
        uint32_t l = (uint32_t)s[at] | (uint32_t)s[at + 1] << 8 | (uint32_t)s[at + 2] << 16 | (uint32_t)s[at + 3] << 24;
        if (l == 0 || l > HS_FRAME_MAX) {
            *bad = 1;
            break;
        }
        if (n - at - 4 < l)
            break;
        off[k] = at + 4;
        len[k] = l;
        k++;
        at += 4 + l;
    }
    return k;
}

static void case_decode_random(void)
{
    const Hysim__ClientMsg **msgs;
    int nm = bt_sample_client_msgs(&msgs);
    const Hysim__Reply **replies;
    int nr = bt_sample_replies(&replies);
    struct sample samples[16];
    int ns = 0;
    for (int i = 0; i < nm; i++)
        samples[ns++] = (struct sample){&msgs[i]->base, 0};
    for (int i = 0; i < nr; i++)
        samples[ns++] = (struct sample){&replies[i]->base, 1};

    uint64_t seed = 0xdec0de;
    const size_t cap = 4096;
    uint8_t *b = malloc(cap);
    CHECK(b, "malloc");
    int refused = 0, iters = 20000;
    for (int it = 0; it < iters; it++) {
        const struct sample *s = &samples[bt_rand(&seed) % (uint64_t)ns];
        size_t n = protobuf_c_message_get_packed_size(s->m);
        CHECK(n <= cap, "sample too big");
        protobuf_c_message_pack(s->m, b);
        mutate(b, &n, cap, &seed);
        refused += check_body(b, n, s->is_reply);
    }
    printf("direct: %d of %d mutated messages refused\n", refused, iters);
    CHECK(refused > 0 && refused < iters, "mutations should both break and keep messages");

    /* Streams of mutated frames, some with mutated lengths, through the reader
     * in random chunk sizes; it must find exactly the frames a reference
     * parse finds, and stop at the same bad length. */
    const size_t scap = 64 * 1024;
    uint8_t *stream = malloc(scap);
    CHECK(stream, "malloc");
    size_t ref_off[512], ref_len[512];
    int streams = 500, frames_seen = 0, ended[3] = {0, 0, 0}; /* EOF, truncated, too large */
    for (int st = 0; st < streams; st++) {
        size_t sn = 0;
        int nframes = 1 + (int)(bt_rand(&seed) % 100);
        for (int f = 0; f < nframes && sn + 4 + cap <= scap; f++) {
            const struct sample *s = &samples[bt_rand(&seed) % (uint64_t)ns];
            size_t n = protobuf_c_message_get_packed_size(s->m);
            protobuf_c_message_pack(s->m, b);
            if (bt_rand(&seed) % 2)
                mutate(b, &n, cap, &seed);
            if (n == 0) /* the framing never carries an empty body (bad lengths come below) */
                continue;
            uint32_t l = (uint32_t)n;
            uint64_t r = bt_rand(&seed) % 1000;
            if (r == 0)
                l = HS_FRAME_MAX + 1 + (uint32_t)(bt_rand(&seed) % 1000);
            else if (r == 1)
                l = 0xFFFFFFFFu;
            else if (r < 12) /* a length off by a little: frames misalign from here */
                l = (uint32_t)(n + bt_rand(&seed) % 5) - 2;
            put_le32(stream + sn, l);
            memcpy(stream + sn + 4, b, n);
            sn += 4 + n;
        }
        if (bt_rand(&seed) % 4 == 0) /* cut the stream short */
            sn = bt_rand(&seed) % (sn + 1);
        int bad;
        int nref = ref_frames(stream, sn, ref_off, ref_len, 512, &bad);

        int p[2];
        CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2");
        hs_frame_reader rd;
        hs_frame_reader_init(&rd);
        size_t fed = 0;
        /* status: 1 (HS_FRAME_EOF too is 1) while the stream goes on, then how it ended. */
        int got = 0, status = 1, wopen = 1, done = 0;
        while (!done) {
            if (fed < sn) {
                size_t chunk = 1 + bt_rand(&seed) % (bt_rand(&seed) % 2 ? 16 : 5000);
                if (chunk > sn - fed)
                    chunk = sn - fed;
                bt_write_all(p[1], stream + fed, chunk);
                fed += chunk;
            }
            if (fed == sn && wopen) {
                close(p[1]);
                wopen = 0;
            }
            long fr;
            while ((fr = hs_frame_reader_fill(&rd, p[0])) > 0) {
                const uint8_t *body;
                size_t len;
                int rc;
                while ((rc = hs_frame_reader_next(&rd, &body, &len)) == HS_FRAME_OK) {
                    CHECK(got < nref, "stream %d: reader found more frames than %d", st, nref);
                    CHECK(len == ref_len[got] && memcmp(body, stream + ref_off[got], len) == 0,
                          "stream %d frame %d differs from the reference", st, got);
                    /* Decode as whichever type; either answer is fine, a crash is not. */
                    (void)check_body(body, len, got % 2);
                    got++;
                }
                if (rc != 1) {
                    status = rc;
                    done = 1;
                    break;
                }
            }
            CHECK(fr >= -1 || done, "fill: %s", strerror(errno));
            if (!done && fr == 0) {
                status = hs_frame_reader_at_eof(&rd);
                done = 1;
            }
        }
        CHECK(got == nref, "stream %d: %d frames, reference %d", st, got, nref);
        frames_seen += got;
        ended[status == HS_FRAME_EOF ? 0 : status == HS_FRAME_TRUNCATED ? 1 : 2]++;
        if (bad)
            CHECK(status == HS_FRAME_TOO_LARGE, "stream %d: bad length gave %s", st, hs_frame_status_name(status));
        else {
            size_t end = nref ? ref_off[nref - 1] + ref_len[nref - 1] : 0;
            int want = end == sn ? HS_FRAME_EOF : HS_FRAME_TRUNCATED;
            CHECK(status == want, "stream %d: ended with %s, want %s", st, hs_frame_status_name(status),
                  hs_frame_status_name(want));
        }
        CHECK(rd.cap <= 2 * (sn + 4096), "stream %d: buffer %zu for a %zu-byte stream", st, rd.cap, sn);
        hs_frame_reader_free(&rd);
        if (wopen)
            close(p[1]);
        close(p[0]);
    }
    printf("streams: %d frames; %d ended cleanly, %d truncated, %d at a bad length\n", frames_seen, ended[0], ended[1],
           ended[2]);
    CHECK(ended[0] && ended[1] && ended[2], "every way of ending should occur");
    free(stream);
    free(b);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2, "usage: %s CASE", argv[0]);
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"garbage_random", case_garbage_random},
        {"garbage_wire_types", case_garbage_wire_types},
        {"decode_random", case_decode_random},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", argv[1]);
            return 0;
        }
    CHECK(0, "unknown case %s", argv[1]);
}
