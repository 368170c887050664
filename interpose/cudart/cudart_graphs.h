/*
 * Private to libcudart.so.13's CUDA graphs: the graph and node objects that
 * cudart_graphs.c (explicit graphs, instantiation, launch) and
 * cudart_capture.c (stream capture) share, and the one lock guarding them.
 *
 * A node is the stream op it issues at each launch (client.h hs_stream_op;
 * its stream field is unused) on its device, with the nodes it depends on.
 */
#ifndef HYSIM_INTERPOSE_CUDART_GRAPHS_H
#define HYSIM_INTERPOSE_CUDART_GRAPHS_H

#include <pthread.h>

#include "cudart_internal.h"

#define HS_GRAPH_HIDDEN __attribute__((visibility("hidden")))

/* A growable set of nodes, in insertion order, without duplicates. */
typedef struct hs_nodeset {
    cudaGraphNode_t *v;
    size_t n, cap;
} hs_nodeset;

struct CUgraphNode_st {
    cudaGraph_t owner;
    enum cudaGraphNodeType type;
    hs_stream_op op;  /* kernel, memcpy, memset, event record/wait; unused for empty nodes */
    const void *func; /* an explicit kernel node's host function (cudaGraphKernelNodeGetParams) */
    int dev;
    hs_nodeset deps;
};

struct CUgraph_st {
    hs_nodeset nodes; /* creation order: cudaGraphGetNodes' order */
};

/* Guards every graph, node, executable graph and capture. */
HS_GRAPH_HIDDEN extern pthread_mutex_t hs_graph_lock;

/* Set while a graph launch issues its nodes: the capture hooks let them through. */
HS_GRAPH_HIDDEN extern __thread int hs_graph_replaying;

HS_GRAPH_HIDDEN void hs_nodeset_add(hs_nodeset *s, cudaGraphNode_t node);
/* Appends a node known not to be there. */
HS_GRAPH_HIDDEN void hs_nodeset_push(hs_nodeset *s, cudaGraphNode_t node);
HS_GRAPH_HIDDEN int hs_nodeset_has(const hs_nodeset *s, cudaGraphNode_t node);
HS_GRAPH_HIDDEN void hs_nodeset_copy(hs_nodeset *dst, const hs_nodeset *src);
HS_GRAPH_HIDDEN void hs_nodeset_free(hs_nodeset *s);

/* ---- cudart_graphs.c (callers hold hs_graph_lock) ---- */
HS_GRAPH_HIDDEN cudaGraph_t hs_graph_new_locked(void);
HS_GRAPH_HIDDEN void hs_graph_free_locked(cudaGraph_t g);
/* A new node of g depending on deps (NULL: none); op may be NULL (empty node). */
HS_GRAPH_HIDDEN cudaGraphNode_t hs_graph_add_node_locked(cudaGraph_t g, enum cudaGraphNodeType type,
                                                         const hs_stream_op *op, int dev, const hs_nodeset *deps);

/* ---- cudart_capture.c ---- */
/* Whether work issued to stream is being captured (cudaGraphLaunch refuses such a stream). */
HS_GRAPH_HIDDEN int hs_capture_stream_active(cudaStream_t stream);
/* Offers op (its stream set) to a capture in progress: 1 when taken, *err the call's result (the capture hook). */
HS_GRAPH_HIDDEN int hs_capture_divert(hs_stream_op *op, cudaError_t *err);
/*
 * The sequence number a graph launch gives its copy of a captured NCCL call
 * (the communicator's next), under hs_graph_lock.
 */
HS_GRAPH_HIDDEN uint64_t hs_capture_replay_seq_locked(const hs_stream_op *op);

#endif
