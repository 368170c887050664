/*
 * Writes the frame fuzzer's seed corpus into the folder given: a few real
 * frames of each message type, as the interposer and hysimd send them, each
 * behind the fuzzer's leading "how to cut the stream" byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "messages.h"

static const char *g_dir;

static void write_seed(const char *name, uint8_t cut, const uint8_t *body, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint8_t hdr[5] = {cut, (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
    fwrite(hdr, 1, sizeof hdr, f);
    fwrite(body, 1, len, f);
    fclose(f);
}

static void seed_client(const char *name, uint8_t cut, const Hysim__ClientMsg *m)
{
    uint8_t buf[4096];
    size_t n = hysim__client_msg__pack(m, buf);
    write_seed(name, cut, buf, n);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_frame_seeds FOLDER\n");
        return 2;
    }
    g_dir = argv[1];

    Hysim__Register reg = HYSIM__REGISTER__INIT;
    reg.server = 1;
    reg.pid = 4242;
    reg.gpu_count = 8;
    reg.first_gpu = 8;
    reg.program = "./train";
    reg.token = "0123456789abcdef0123456789abcdef";
    reg.protocol_version = 1;
    Hysim__ClientMsg m = HYSIM__CLIENT_MSG__INIT;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_REGISTER;
    m.register_ = &reg;
    seed_client("register", 200, &m);

    Hysim__Kernel k = HYSIM__KERNEL__INIT;
    k.name = "_Z5scalePfi";
    k.grid_x = 16;
    k.block_x = 256;
    Hysim__Collective c = HYSIM__COLLECTIVE__INIT;
    c.comm_key = 0x1234;
    c.rank = 3;
    c.seq = 7;
    c.bytes = 1 << 20;
    Hysim__Op ops[2] = {HYSIM__OP__INIT, HYSIM__OP__INIT};
    ops[0].host_ns = 1000;
    ops[0].kind_case = HYSIM__OP__KIND_KERNEL;
    ops[0].kernel = &k;
    ops[1].host_ns = 2000;
    ops[1].stream = 3;
    ops[1].kind_case = HYSIM__OP__KIND_COLLECTIVE;
    ops[1].collective = &c;
    Hysim__Op *pops[2] = {&ops[0], &ops[1]};
    Hysim__Batch b = HYSIM__BATCH__INIT;
    b.n_ops = 2;
    b.ops = pops;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BATCH;
    m.batch = &b;
    seed_client("batch", 3, &m);

    uint64_t timed[2] = {1, 2};
    Hysim__Wait w = HYSIM__WAIT__INIT;
    w.host_ns = 5000;
    w.cond = HYSIM__WAIT__COND__EVENT_DONE;
    w.event = 1;
    w.n_timed_events = 2;
    w.timed_events = timed;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_WAIT;
    m.wait = &w;
    seed_client("wait", 1, &m);

    uint64_t peaks[2] = {1u << 30, 2u << 30};
    Hysim__Bye bye = HYSIM__BYE__INIT;
    bye.host_ns = 9000;
    bye.n_peak_memory_bytes = 2;
    bye.peak_memory_bytes = peaks;
    m.msg_case = HYSIM__CLIENT_MSG__MSG_BYE;
    m.bye = &bye;
    seed_client("bye", 7, &m);

    Hysim__Setup setup = HYSIM__SETUP__INIT;
    setup.gpu_model = "NVIDIA H200";
    setup.gpus_per_server = 8;
    Hysim__EventTime et = HYSIM__EVENT_TIME__INIT;
    et.event = 1;
    et.done = 1;
    et.time_ps = 123456;
    Hysim__EventTime *pet[1] = {&et};
    Hysim__Reply r = HYSIM__REPLY__INIT;
    r.now_ns = 77;
    r.done = 1;
    r.setup = &setup;
    r.n_event_times = 1;
    r.event_times = pet;
    uint8_t buf[4096];
    write_seed("reply", 250, buf, hysim__reply__pack(&r, buf));
    return 0;
}
