// hysim fabric: the ECMP hash of a RoCEv2 flow, as a switch computes it.
//
// A RoCEv2 packet is UDP to port 4791; its source port comes from the
// sending queue pair (QP), and NICs and NCCL number QPs sequentially. The
// model gives each flow a QP of its own, the next one of its (source NIC,
// destination NIC) pair, numbered in the order flows start (time, then flow
// id: not the order they were added, which must not matter): UDP source port
// 0xC000 + that number (the dynamic port range, wrapping after 16384). A switch picks the next hop from a CRC of
// the 5-tuple whose initial value is its configured hash seed (here
// run.seed), as Broadcom and Mellanox switches do.
//
// Why this spreads sequential flows evenly: CRC-32 is affine over GF(2) in
// its input bits (crc(a ^ b) = crc(a) ^ crc(b) ^ crc(0) for equal lengths),
// and the seed only adds a constant. A spine index of the hash's low bits is
// then M x ^ c(seed) for the varying tuple bits x; when M has full rank every
// index is hit equally often by a full set of x (e.g. 8 source NICs × 8
// destination NICs, or consecutive source ports), whatever the seed. A
// random-like hash gives multinomial counts instead (tests/fabric/test_roce.c
// case ecmp checks both).
#ifndef HYSIM_NS3_GLUE_ECMP_HASH_H
#define HYSIM_NS3_GLUE_ECMP_HASH_H

#include <cstdint>

namespace hysim_fab
{

constexpr uint16_t kRoceUdpPort = 4791;        // RoCEv2's UDP destination port
constexpr uint16_t kRoceFirstSrcPort = 0xC000; // first QP's UDP source port
constexpr uint32_t kRoceSrcPorts = 0x4000;     // 0xC000..0xFFFF

// The UDP source port of connection number qp (0, 1, ...) between two NICs.
inline uint16_t
RoceSrcPort(uint32_t qp)
{
    return static_cast<uint16_t>(kRoceFirstSrcPort + qp % kRoceSrcPorts);
}

// NIC n's IPv4 address: 10.0.0.0/8 numbered by NIC index (constant bits do
// not change how the hash spreads; they keep the key a real 5-tuple).
inline uint32_t
RoceNicIp(uint32_t nic)
{
    return 0x0A000000u + nic;
}

// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) of the 5-tuple
// (source IP, destination IP, protocol 17, source port, destination port)
// in network byte order, its register starting at ~seed.
inline uint32_t
EcmpHash(uint32_t seed, uint32_t src_ip, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port)
{
    const uint8_t key[13] = {uint8_t(src_ip >> 24),  uint8_t(src_ip >> 16), uint8_t(src_ip >> 8),
                             uint8_t(src_ip),        uint8_t(dst_ip >> 24), uint8_t(dst_ip >> 16),
                             uint8_t(dst_ip >> 8),   uint8_t(dst_ip),       17,
                             uint8_t(src_port >> 8), uint8_t(src_port),     uint8_t(dst_port >> 8),
                             uint8_t(dst_port)};
    uint32_t crc = ~seed;
    for (uint8_t byte : key)
    {
        crc ^= byte;
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

// run.seed folded to the 32 bits of a switch's hash seed.
inline uint32_t
EcmpSeed(uint64_t run_seed)
{
    return static_cast<uint32_t>(run_seed ^ (run_seed >> 32));
}

} // namespace hysim_fab

#endif
