/* Helpers shared by the bridge/ tests: checks and sample messages. */
#ifndef HYSIM_TESTS_BRIDGE_TEST_H
#define HYSIM_TESTS_BRIDGE_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "messages.h"
#include "test_check.h"

/* Every ClientMsg kind (Register, Batch holding every Op kind, Wait, Bye). */
int bt_sample_client_msgs(const Hysim__ClientMsg ***out);
/* Replies: a full one (Setup, event times, error), a plain one, an all-default one. */
int bt_sample_replies(const Hysim__Reply ***out);

/* 1 when the two messages encode to the same bytes (protobuf-c packs in field order). */
int bt_same_message(const ProtobufCMessage *a, const ProtobufCMessage *b);

/* Packs m into a malloc'd buffer; *len gets its size. */
uint8_t *bt_pack(const ProtobufCMessage *m, size_t *len);

/* A connected AF_UNIX stream socketpair; exits on failure. */
void bt_socketpair(int sv[2]);

/* Writes all of buf (blocking); exits on failure. */
void bt_write_all(int fd, const void *buf, size_t len);

/* splitmix64, for seeded reproducible randomness. */
uint64_t bt_rand(uint64_t *state);

#endif
