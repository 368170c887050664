/*
 * libFuzzer target: the frame reader (hs_frame_reader_*) and the decoders,
 * fed bytes a hostile peer could send. The first input byte picks how the
 * stream is cut into reads, so frames split across reads are covered; every
 * complete body is decoded as both message types, and whatever decodes is
 * encoded again and must decode to the same bytes.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "messages.h"

#define HS_FUZZ_MAX_INPUT (48 * 1024) /* below a pipe's capacity: the writer never blocks */

/*
 * protobuf-c keeps fields it does not know and writes them back canonically;
 * some it accepted in a non-canonical form (field number 0 in a two-byte tag)
 * it then refuses. hysim never re-sends what it received, so the round trip
 * is only checked for messages without unknown fields.
 */
static bool has_unknown_fields(const ProtobufCMessage *m)
{
    if (m->n_unknown_fields)
        return true;
    const ProtobufCMessageDescriptor *d = m->descriptor;
    const char *base = (const char *)m;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && *(const uint32_t *)(base + f->quantifier_offset) != f->id)
            continue;
        if (f->label == PROTOBUF_C_LABEL_REPEATED) {
            size_t n = *(const size_t *)(base + f->quantifier_offset);
            ProtobufCMessage *const *arr = *(ProtobufCMessage *const *const *)(base + f->offset);
            for (size_t j = 0; j < n; j++)
                if (arr[j] && has_unknown_fields(arr[j]))
                    return true;
        } else {
            const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)(base + f->offset);
            if (sub && has_unknown_fields(sub))
                return true;
        }
    }
    return false;
}

static void check_roundtrip_client(const Hysim__ClientMsg *m)
{
    if (has_unknown_fields(&m->base))
        return;
    size_t n = hysim__client_msg__get_packed_size(m);
    uint8_t *buf = malloc(n ? n : 1);
    hysim__client_msg__pack(m, buf);
    char err[256];
    Hysim__ClientMsg *again = hs_frame_decode_client_msg(buf, n, err, sizeof err);
    if (!again && n > 0) {
        fprintf(stderr, "re-encoded ClientMsg of %zu bytes does not decode: %s\n", n, err);
        abort();
    }
    if (again)
        hysim__client_msg__free_unpacked(again, NULL);
    free(buf);
}

static void decode_body(const uint8_t *body, size_t len)
{
    char err[256];
    Hysim__ClientMsg *m = hs_frame_decode_client_msg(body, len, err, sizeof err);
    if (m) {
        check_roundtrip_client(m);
        hysim__client_msg__free_unpacked(m, NULL);
    } else if (!err[0]) {
        fprintf(stderr, "a body that does not decode gave no message\n");
        abort();
    }
    Hysim__Reply *r = hs_frame_decode_reply(body, len, err, sizeof err);
    if (r)
        hysim__reply__free_unpacked(r, NULL);
}

/* Non-blocking side: reads in chunks of `step` bytes, extracting frames as they complete. */
static void fuzz_reader(const uint8_t *data, size_t size, size_t step)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        abort();
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    hs_frame_reader rd;
    hs_frame_reader_init(&rd);
    size_t at = 0;
    int status = 1;
    bool closed = false;
    for (;;) {
        if (at < size) {
            size_t n = size - at < step ? size - at : step;
            if (write(p[1], data + at, n) != (ssize_t)n)
                abort();
            at += n;
        }
        if (at == size && !closed) {
            close(p[1]); /* the peer is done: the reader must see EOF, also for an empty stream */
            closed = true;
        }
        long got = hs_frame_reader_fill(&rd, p[0]);
        for (;;) {
            const uint8_t *body;
            size_t len;
            status = hs_frame_reader_next(&rd, &body, &len);
            if (status != HS_FRAME_OK)
                break;
            if (len == 0 || len > HS_FRAME_MAX)
                abort(); /* the reader promised never to hand these out */
            decode_body(body, len);
        }
        if (status < 0 || got == 0 || got == HS_FRAME_IO)
            break;
    }
    if (status >= 0) {
        int eof = hs_frame_reader_at_eof(&rd);
        if (eof != HS_FRAME_EOF && eof != HS_FRAME_TRUNCATED)
            abort();
    }
    if (!closed)
        close(p[1]);
    close(p[0]);
    hs_frame_reader_free(&rd);
}

/* Blocking side: one frame at a time until the stream ends or an error. */
static void fuzz_blocking(const uint8_t *data, size_t size)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        abort();
    if (size && write(p[1], data, size) != (ssize_t)size)
        abort();
    close(p[1]);
    for (;;) {
        uint8_t *body = NULL;
        size_t len = 0;
        char err[256];
        int rc = hs_frame_read_blocking(p[0], &body, &len, err, sizeof err);
        if (rc != HS_FRAME_OK) {
            free(body);
            break;
        }
        decode_body(body, len);
        free(body);
    }
    close(p[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > HS_FUZZ_MAX_INPUT)
        return 0;
    size_t step = (size_t)data[0] % 64 + 1;
    if (data[0] >= 192)
        step = HS_FUZZ_MAX_INPUT; /* everything at once */
    fuzz_reader(data + 1, size - 1, step);
    fuzz_blocking(data + 1, size - 1);
    return 0;
}
