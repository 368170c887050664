/*
 * The session layer's translation between the wire's messages (messages.h,
 * hysim.proto) and the daemon's own types (requests.h): only session.c and
 * session_wire.c see the wire's types (docs/architecture.md, "The wire stops
 * at the session").
 */
#ifndef HYSIM_BRIDGE_SESSION_WIRE_H
#define HYSIM_BRIDGE_SESSION_WIRE_H

#include "daemon_internal.h"
#include "messages.h"

/* m as an issued op; its strings and bytes point into m (valid while m is). Unknown or empty kinds:
 * HS_ISSUED_NONE. */
void hs_wire_op(const Hysim__Op *m, hs_issued_op *op);
/* m as a split request; its calls are *calls, allocated (free them). */
void hs_wire_split(const Hysim__CommSplit *m, hs_split_request *r, hs_split_rank_call **calls);
/* A Wait's condition (the caller has checked it is one the daemon knows). */
enum hs_wait_cond hs_wire_wait_cond(Hysim__Wait__Cond c);
/* Sends r as it is (the session's own replies: Register's setup, Join's, a refusal). */
void hs_session_send(hs_session *s, const Hysim__Reply *r);

#endif
