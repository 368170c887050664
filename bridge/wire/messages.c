/*
 * Encoding and decoding of the wire's messages (messages.h), one per frame.
 */
#include "messages.h"
#include "error_text.h"

#include <stdlib.h>
#include <string.h>

/* Messages up to this size are encoded on the stack. */
#define STACK_ENCODE 4096u

/*
 * Encodes m and writes it as one frame. A message whose every field has its
 * default value packs to 0 bytes, which the framing cannot carry; the caller
 * passes `empty`, an explicit encoding of a default field that decodes to
 * the same message, or NULL to refuse such a message.
 */
static int send_msg(int fd, const ProtobufCMessage *m, const uint8_t *empty, size_t empty_len, char *err, size_t errlen)
{
    const char *name = m->descriptor->name;
    size_t n = protobuf_c_message_get_packed_size(m);
    if (n > HS_FRAME_MAX) {
        hs_error_format(err, errlen, "%s of %zu bytes exceeds the frame limit of %u bytes", name, n, HS_FRAME_MAX);
        return HS_FRAME_TOO_LARGE;
    }
    if (n == 0) {
        if (!empty) {
            hs_error_format(err, errlen, "refusing to send an empty %s", name);
            return HS_FRAME_TOO_LARGE;
        }
        return hs_frame_write(fd, empty, empty_len, err, errlen);
    }
    uint8_t stack[STACK_ENCODE];
    uint8_t *body = stack;
    if (n > sizeof stack) {
        body = malloc(n);
        if (!body) {
            hs_error_format(err, errlen, "cannot allocate %zu bytes to encode %s", n, name);
            return HS_FRAME_IO;
        }
    }
    size_t packed = protobuf_c_message_pack(m, body);
    int rc;
    if (packed != n) { /* cannot happen with protobuf-c; never send a frame that lies */
        hs_error_format(err, errlen, "%s packed to %zu bytes, expected %zu", name, packed, n);
        rc = HS_FRAME_IO;
    } else {
        rc = hs_frame_write(fd, body, n, err, errlen);
    }
    if (body != stack)
        free(body);
    return rc;
}

int hs_frame_send_client_msg(int fd, const Hysim__ClientMsg *m, char *err, size_t errlen)
{
    /* A ClientMsg with no message set means nothing; refuse it. */
    return send_msg(fd, &m->base, NULL, 0, err, errlen);
}

int hs_frame_send_reply(int fd, const Hysim__Reply *m, char *err, size_t errlen)
{
    /* now_ns = 0 (field 1, varint), written explicitly: the same all-default Reply. */
    static const uint8_t empty_reply[] = {0x08, 0x00};
    return send_msg(fd, &m->base, empty_reply, sizeof empty_reply, err, errlen);
}

Hysim__ClientMsg *hs_frame_decode_client_msg(const uint8_t *body, size_t len, char *err, size_t errlen)
{
    Hysim__ClientMsg *m = hysim__client_msg__unpack(NULL, len, body);
    if (!m)
        hs_error_format(err, errlen, "garbage frame: %zu bytes do not decode as hysim.ClientMsg", len);
    return m;
}

Hysim__Reply *hs_frame_decode_reply(const uint8_t *body, size_t len, char *err, size_t errlen)
{
    Hysim__Reply *m = hysim__reply__unpack(NULL, len, body);
    if (!m)
        hs_error_format(err, errlen, "garbage frame: %zu bytes do not decode as hysim.Reply", len);
    return m;
}
