// hysim fabric: the C ABI calls that fabric.cc forwards to a worker-mode
// fabric (fabric_proxy.cc). A worker-mode hs_fabric has remote != nullptr and
// no model in this process.
#ifndef HYSIM_NS3GLUE_FABRIC_PROXY_H
#define HYSIM_NS3GLUE_FABRIC_PROXY_H

#include "hysim/fabric.h"

#include <cstddef>
#include <cstdint>

namespace hysim_fab
{

struct WorkerProxy;

bool ProxyWanted(); // HYSIM_FABRIC_WORKER=1, unless hs_fabric_create_opts said otherwise
hs_fabric* ProxyCreate(const hs_scenario* sc, const hs_fabric_options* o, char* err, size_t errlen);
int ProxyAddFlow(hs_fabric* f, uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes,
                 uint64_t start, char* err, size_t errlen);
int ProxyNextCompletion(hs_fabric* f, uint64_t limit_ps, hs_flow_done* done);
uint64_t ProxyNow(const hs_fabric* f);
void ProxyStats(const hs_fabric* f, hs_fabric_stats* out);
size_t ProxyLinkCount(const hs_fabric* f);
int ProxyLinkStats(const hs_fabric* f, size_t i, hs_fabric_link_stats* out);
int ProxySampleLinks(hs_fabric* f, uint64_t interval_ps, hs_fabric_sample_fn fn, void* ctx,
                     char* err, size_t errlen);
void ProxyDestroy(hs_fabric* f);

} // namespace hysim_fab

#endif
