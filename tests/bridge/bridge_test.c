#include "bridge_test.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int bt_sample_client_msgs(const Hysim__ClientMsg ***out)
{
    static Hysim__Register reg = HYSIM__REGISTER__INIT;
    static Hysim__Kernel kernel = HYSIM__KERNEL__INIT;
    static Hysim__Copy copy = HYSIM__COPY__INIT;
    static Hysim__Memset memset_ = HYSIM__MEMSET__INIT;
    static Hysim__EventRecord erec = HYSIM__EVENT_RECORD__INIT;
    static Hysim__StreamWaitEvent swait = HYSIM__STREAM_WAIT_EVENT__INIT;
    static Hysim__StreamCreate screate = HYSIM__STREAM_CREATE__INIT;
    static Hysim__StreamDestroy sdestroy = HYSIM__STREAM_DESTROY__INIT;
    static Hysim__CommInit cinit = HYSIM__COMM_INIT__INIT;
    static Hysim__CommDestroy cdestroy = HYSIM__COMM_DESTROY__INIT;
    static Hysim__Collective coll = HYSIM__COLLECTIVE__INIT;
    static Hysim__Op ops[10];
    static Hysim__Op *op_ptrs[10];
    static Hysim__Batch batch = HYSIM__BATCH__INIT;
    static Hysim__Wait wait = HYSIM__WAIT__INIT;
    static uint64_t timed[] = {7, 0, UINT64_MAX};
    static Hysim__Bye bye = HYSIM__BYE__INIT;
    static uint64_t peaks[] = {80ull << 30, 0, 12345};
    static Hysim__ClientMsg msgs[4];
    static const Hysim__ClientMsg *ptrs[4];

    reg.server = 3;
    reg.pid = 4242;
    reg.first_gpu = 24;
    reg.gpu_count = 8;
    reg.host_ns = 1000000001ull;
    reg.program = "train.py";
    reg.protocol_version = 1;

    kernel.name = "_Z6matmulPfS_S_i";
    kernel.grid_x = 1024, kernel.grid_y = 2, kernel.grid_z = 1;
    kernel.block_x = 256, kernel.block_y = 1, kernel.block_z = 1;
    kernel.shared_bytes = 49152;
    copy.kind = HYSIM__COPY_KIND__D2D;
    copy.bytes = 1ull << 33;
    copy.peer_gpu = 5;
    memset_.bytes = 4096;
    erec.event = 17;
    swait.event = 17;
    screate.non_blocking = 1;
    screate.priority = -1;
    cinit.comm_key = 0xdeadbeefcafef00dull;
    cinit.rank = 2;
    cinit.nranks = 16;
    cdestroy.comm_key = cinit.comm_key;
    cdestroy.rank = 2;
    coll.comm_key = cinit.comm_key;
    coll.rank = 2;
    coll.seq = 99;
    coll.kind = HYSIM__COLL_KIND__ALL_TO_ALL;
    coll.bytes = 1ull << 28;
    coll.root = -1;

    for (int i = 0; i < 10; i++) {
        hysim__op__init(&ops[i]);
        ops[i].host_ns = 2000000000ull + (uint64_t)i;
        ops[i].gpu = (uint32_t)i % 3;
        ops[i].stream = (uint64_t)i;
        op_ptrs[i] = &ops[i];
    }
    ops[0].kind_case = HYSIM__OP__KIND_KERNEL, ops[0].kernel = &kernel;
    ops[1].kind_case = HYSIM__OP__KIND_COPY, ops[1].copy = &copy;
    ops[2].kind_case = HYSIM__OP__KIND_MEMSET, ops[2].memset = &memset_;
    ops[3].kind_case = HYSIM__OP__KIND_EVENT_RECORD, ops[3].event_record = &erec;
    ops[4].kind_case = HYSIM__OP__KIND_WAIT_EVENT, ops[4].wait_event = &swait;
    ops[5].kind_case = HYSIM__OP__KIND_STREAM_CREATE, ops[5].stream_create = &screate;
    ops[6].kind_case = HYSIM__OP__KIND_STREAM_DESTROY, ops[6].stream_destroy = &sdestroy;
    ops[7].kind_case = HYSIM__OP__KIND_COMM_INIT, ops[7].comm_init = &cinit;
    ops[8].kind_case = HYSIM__OP__KIND_COMM_DESTROY, ops[8].comm_destroy = &cdestroy;
    ops[9].kind_case = HYSIM__OP__KIND_COLLECTIVE, ops[9].collective = &coll;
    batch.n_ops = 10;
    batch.ops = op_ptrs;

    wait.host_ns = 3000000000ull;
    wait.cond = HYSIM__WAIT__COND__EVENT_DONE;
    wait.gpu = 1;
    wait.stream = 2;
    wait.event = 7;
    wait.query = 1;
    wait.n_timed_events = 3;
    wait.timed_events = timed;

    bye.host_ns = 4000000000ull;
    bye.n_peak_memory_bytes = 3;
    bye.peak_memory_bytes = peaks;
    bye.kernels_launched = 1000000;

    for (int i = 0; i < 4; i++)
        hysim__client_msg__init(&msgs[i]);
    msgs[0].msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER, msgs[0].register_ = &reg;
    msgs[1].msg_case = HYSIM__CLIENT_MSG__MSG_BATCH, msgs[1].batch = &batch;
    msgs[2].msg_case = HYSIM__CLIENT_MSG__MSG_WAIT, msgs[2].wait = &wait;
    msgs[3].msg_case = HYSIM__CLIENT_MSG__MSG_BYE, msgs[3].bye = &bye;
    for (int i = 0; i < 4; i++)
        ptrs[i] = &msgs[i];
    *out = ptrs;
    return 4;
}

int bt_sample_replies(const Hysim__Reply ***out)
{
    static Hysim__Setup setup = HYSIM__SETUP__INIT;
    static Hysim__EventTime et[2];
    static Hysim__EventTime *et_ptrs[2];
    static Hysim__Reply replies[3];
    static const Hysim__Reply *ptrs[3];

    setup.gpu_model = "H100-SXM5-80GB";
    setup.gpu_memory_bytes = 80ull << 30;
    setup.sm_count = 132;
    setup.cc_major = 9;
    setup.cc_minor = 0;
    setup.gpus_per_server = 8;
    setup.host_time = 2;
    setup.host_time_scale = 0.5;
    setup.host_time_fixed_ns = 1000;
    setup.epoch_ns = 1700000000000000000ull;
    setup.total_gpus = 64;
    for (int i = 0; i < 2; i++) {
        hysim__event_time__init(&et[i]);
        et_ptrs[i] = &et[i];
    }
    et[0].event = 7, et[0].done = 1, et[0].recorded = 1, et[0].time_ps = 123456789012ull;
    et[1].event = 8, et[1].recorded = 1;

    for (int i = 0; i < 3; i++)
        hysim__reply__init(&replies[i]);
    replies[0].now_ns = 5000000000ull;
    replies[0].done = 1;
    replies[0].error = "no such stream";
    replies[0].setup = &setup;
    replies[0].n_event_times = 2;
    replies[0].event_times = et_ptrs;
    replies[1].now_ns = 42;
    replies[1].done = 1;
    /* replies[2]: every field default; it packs to 0 bytes. */
    for (int i = 0; i < 3; i++)
        ptrs[i] = &replies[i];
    *out = ptrs;
    return 3;
}

uint8_t *bt_pack(const ProtobufCMessage *m, size_t *len)
{
    *len = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*len + 1);
    CHECK(b, "malloc");
    CHECK(protobuf_c_message_pack(m, b) == *len, "pack size");
    return b;
}

int bt_same_message(const ProtobufCMessage *a, const ProtobufCMessage *b)
{
    if (a->descriptor != b->descriptor)
        return 0;
    size_t la, lb;
    uint8_t *pa = bt_pack(a, &la), *pb = bt_pack(b, &lb);
    int same = la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

void bt_socketpair(int sv[2])
{
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair: %s", strerror(errno));
}

void bt_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        CHECK(n > 0, "write: %s", strerror(errno));
        p += n;
        len -= (size_t)n;
    }
}

uint64_t bt_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
