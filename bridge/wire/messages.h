/*
 * The wire protocol's two messages (hysim.proto, protobuf-c): a process sends
 * ClientMsgs, hysimd answers with Replies, each in one frame (frame.h). Only
 * the ends of the connection see these types: the interposer's client and
 * hysimd's session layer (docs/architecture.md, "The wire").
 */
#ifndef HYSIM_BRIDGE_MESSAGES_H
#define HYSIM_BRIDGE_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "hysim.pb-c.h"

/* Encodes and writes one message in one frame: HS_FRAME_OK or an HS_FRAME_* error, with a message in err. */
int hs_frame_send_client_msg(int fd, const Hysim__ClientMsg *m, char *err, size_t errlen);
int hs_frame_send_reply(int fd, const Hysim__Reply *m, char *err, size_t errlen);

/* Decoders: NULL (with HS_FRAME_GARBAGE's message in err) when the body is not a valid message. */
Hysim__ClientMsg *hs_frame_decode_client_msg(const uint8_t *body, size_t len, char *err, size_t errlen);
Hysim__Reply *hs_frame_decode_reply(const uint8_t *body, size_t len, char *err, size_t errlen);

#endif
