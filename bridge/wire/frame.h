/*
 * Framing for the hysim wire protocol: a 4-byte little-endian length, then
 * that many bytes of one message (messages.h encodes and decodes them). Used
 * by both ends.
 *
 * Readers never trust the peer: a length of 0 or above HS_FRAME_MAX, a
 * connection that ends inside a frame, or bytes that do not decode are errors
 * with a message, never a crash or an unbounded allocation.
 */
#ifndef HYSIM_BRIDGE_FRAME_H
#define HYSIM_BRIDGE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define HS_FRAME_MAX (16u << 20) /* largest accepted frame body, bytes */

enum hs_frame_status {
    HS_FRAME_OK = 0,
    HS_FRAME_EOF = 1,        /* clean end of stream before a new frame */
    HS_FRAME_TRUNCATED = -1, /* stream ended inside a frame */
    HS_FRAME_TOO_LARGE = -2, /* length 0 or above HS_FRAME_MAX */
    HS_FRAME_GARBAGE = -3,   /* body does not decode as the expected message */
    HS_FRAME_IO = -4,        /* read/write error (errno in the message) */
};

/* Growable byte buffer for incremental (non-blocking) reads. */
typedef struct hs_frame_reader {
    uint8_t *buf;
    size_t len, cap;
    size_t off;   /* bytes at the front already handed out by hs_frame_reader_next */
    size_t limit; /* largest frame body this reader takes (0: HS_FRAME_MAX) */
} hs_frame_reader;

void hs_frame_reader_init(hs_frame_reader *r);
void hs_frame_reader_free(hs_frame_reader *r);
/* Lowers (or restores, with 0) the largest frame body the reader takes; it then never holds more than one such
 * frame's bytes, so a peer that is not trusted yet costs at most that much memory. */
void hs_frame_reader_set_limit(hs_frame_reader *r, size_t max_body);

/*
 * Non-blocking side (hysimd): appends whatever read(fd) returns, then
 * hs_frame_reader_next extracts complete frames one at a time.
 * hs_frame_reader_fill returns bytes read (>0), 0 on EOF, -1 on EAGAIN, or
 * HS_FRAME_IO on error.
 * hs_frame_reader_next returns HS_FRAME_OK and sets *body and *body_len (valid
 * until the next call), 1 when more bytes are needed, or HS_FRAME_TOO_LARGE
 * (a length of 0 or above the reader's limit).
 */
long hs_frame_reader_fill(hs_frame_reader *r, int fd);
int hs_frame_reader_next(hs_frame_reader *r, const uint8_t **body, size_t *body_len);
/* 1 when hs_frame_reader_next would return something other than "need more bytes". */
int hs_frame_reader_ready(const hs_frame_reader *r);
/* At EOF: HS_FRAME_EOF if no partial frame is buffered, else HS_FRAME_TRUNCATED. */
int hs_frame_reader_at_eof(const hs_frame_reader *r);

/* Blocking side (client): reads exactly one frame into a malloc'd buffer. */
int hs_frame_read_blocking(int fd, uint8_t **body, size_t *body_len, char *err, size_t errlen);

/* Writes one frame (length + body) completely, retrying on EINTR/short writes. */
int hs_frame_write(int fd, const uint8_t *body, size_t body_len, char *err, size_t errlen);

const char *hs_frame_status_name(int status);

#endif
