/*
 * CUDA graphs: the common explicit-graph calls, instantiation and launch
 * (stream capture, which builds graphs too, is cudart_capture.c).
 *
 * A launch issues the graph's nodes as the ops they are, in a topological
 * order, one intercepted call for the host. Each node runs on an internal
 * stream of the executable graph: a node continues the stream of one of its
 * dependencies where it can (a chain), and waits on internal events for
 * the others, so independent branches overlap on the simulated GPU exactly
 * as the same work issued on several streams would. Root nodes wait for an
 * event recorded on the launch stream, and the launch stream waits for every
 * chain's end: the graph runs after the stream's earlier work and before its
 * later work. A captured NCCL call is a new collective at every launch, with
 * the communicator's next sequence number. The host pays a launch the CPU
 * cost of one kernel launch (api_cost.h), not one per node.
 *
 * Graph functions not written here stay generated "not supported yet" stubs.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_cost.h"
#include "cudart_graphs.h"
#include "internal.h"

pthread_mutex_t hs_graph_lock = PTHREAD_MUTEX_INITIALIZER;
__thread int hs_graph_replaying;

#define GLOCK()   pthread_mutex_lock(&hs_graph_lock)
#define GUNLOCK() pthread_mutex_unlock(&hs_graph_lock)

/* NCCL group numbers of launched collectives: far above those nccl.c hands out. */
#define REPLAY_GROUP_BASE ((uint64_t)1 << 62)
static _Atomic uint64_t g_replay_groups;

static hs_ptrmap g_graphs; /* cudaGraph_t → 1 */
static hs_ptrmap g_nodes;  /* cudaGraphNode_t → 1 */
static hs_ptrmap g_execs;  /* cudaGraphExec_t → 1 */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "hysim: out of host memory\n");
        abort();
    }
    return p;
}

/* ---- node sets ---- */

int hs_nodeset_has(const hs_nodeset *s, cudaGraphNode_t node)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == node)
            return 1;
    return 0;
}

void hs_nodeset_add(hs_nodeset *s, cudaGraphNode_t node)
{
    if (!hs_nodeset_has(s, node))
        hs_nodeset_push(s, node);
}

void hs_nodeset_push(hs_nodeset *s, cudaGraphNode_t node)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            fprintf(stderr, "hysim: out of host memory\n");
            abort();
        }
    }
    s->v[s->n++] = node;
}

void hs_nodeset_copy(hs_nodeset *dst, const hs_nodeset *src)
{
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        hs_nodeset_add(dst, src->v[i]);
}

void hs_nodeset_free(hs_nodeset *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

static void nodeset_remove(hs_nodeset *s, cudaGraphNode_t node)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] != node)
            s->v[k++] = s->v[i];
    s->n = k;
}

/* ---- graphs and nodes ---- */

cudaGraph_t hs_graph_new_locked(void)
{
    cudaGraph_t g = xcalloc(1, sizeof *g);
    hs_ptrmap_put(&g_graphs, (uintptr_t)g, 1);
    return g;
}

static void node_free_locked(cudaGraphNode_t n)
{
    hs_ptrmap_del(&g_nodes, (uintptr_t)n);
    hs_nodeset_free(&n->deps);
    free(n);
}

void hs_graph_free_locked(cudaGraph_t g)
{
    for (size_t i = 0; i < g->nodes.n; i++)
        node_free_locked(g->nodes.v[i]);
    hs_nodeset_free(&g->nodes);
    hs_ptrmap_del(&g_graphs, (uintptr_t)g);
    free(g);
}

cudaGraphNode_t hs_graph_add_node_locked(cudaGraph_t g, enum cudaGraphNodeType type, const hs_stream_op *op, int dev,
                                         const hs_nodeset *deps)
{
    cudaGraphNode_t n = xcalloc(1, sizeof *n);
    n->owner = g;
    n->type = type;
    if (op)
        n->op = *op;
    n->op.stream = NULL;
    n->dev = dev;
    if (deps)
        hs_nodeset_copy(&n->deps, deps);
    hs_nodeset_push(&g->nodes, n);
    hs_ptrmap_put(&g_nodes, (uintptr_t)n, 1);
    return n;
}

static int graph_ok_locked(cudaGraph_t g) { return g && hs_ptrmap_get(&g_graphs, (uintptr_t)g); }
static int node_ok_locked(cudaGraphNode_t n) { return n && hs_ptrmap_get(&g_nodes, (uintptr_t)n); }

/*
 * The common part of cudaGraphAdd*Node: checks the graph and the
 * dependencies (nodes of that graph, no repeats) and adds the node.
 */
static cudaError_t add_node(cudaGraphNode_t *out, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                            enum cudaGraphNodeType type, const hs_stream_op *op, const void *func)
{
    if (!out || (ndeps && !deps))
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    GLOCK();
    hs_nodeset set = {0};
    if (!graph_ok_locked(g))
        e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < ndeps; i++) {
        if (!node_ok_locked(deps[i]) || deps[i]->owner != g || hs_nodeset_has(&set, deps[i]))
            e = cudaErrorInvalidValue;
        else
            hs_nodeset_add(&set, deps[i]);
    }
    if (e == cudaSuccess) {
        *out = hs_graph_add_node_locked(g, type, op, hs_client_get_device(), &set);
        (*out)->func = func;
    }
    GUNLOCK();
    hs_nodeset_free(&set);
    return e;
}

cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    RT_ENTER();
    if (!pGraph || flags)
        RT_RETURN(cudaErrorInvalidValue);
    GLOCK();
    *pGraph = hs_graph_new_locked();
    GUNLOCK();
    RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    RT_ENTER();
    GLOCK();
    int ok = graph_ok_locked(graph);
    if (ok)
        hs_graph_free_locked(graph);
    GUNLOCK();
    RT_RETURN(ok ? cudaSuccess : cudaErrorInvalidValue);
}

/* A kernel node's op from its parameters: the function must be a registered kernel. */
static cudaError_t kernel_op(const struct cudaKernelNodeParams *p, hs_stream_op *op)
{
    if (!p)
        return cudaErrorInvalidValue;
    void *k = hs_client_kernel_find(p->func);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *op = (hs_stream_op){.kind = HS_SOP_KERNEL,
                         .u.kernel = {k,
                                      {p->gridDim.x, p->gridDim.y, p->gridDim.z},
                                      {p->blockDim.x, p->blockDim.y, p->blockDim.z},
                                      p->sharedMemBytes}};
    return cudaSuccess;
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    hs_stream_op op;
    cudaError_t e = kernel_op(pNodeParams, &op);
    if (e == cudaSuccess)
        e = add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeKernel, &op,
                     pNodeParams->func);
    RT_RETURN(e);
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!pNodeParams || !node_ok_locked(node) || node->type != cudaGraphNodeTypeKernel)
        e = cudaErrorInvalidValue;
    else if (!node->func || node->op.kind != HS_SOP_KERNEL)
        e = cudaErrorNotSupported; /* a captured kernel: hysim keeps no host function for it */
    else {
        const unsigned *g = node->op.u.kernel.grid, *b = node->op.u.kernel.block;
        memset(pNodeParams, 0, sizeof *pNodeParams);
        pNodeParams->func = (void *)node->func;
        pNodeParams->gridDim = (dim3){g[0], g[1], g[2]};
        pNodeParams->blockDim = (dim3){b[0], b[1], b[2]};
        pNodeParams->sharedMemBytes = (unsigned)node->op.u.kernel.shared;
    }
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    hs_stream_op op;
    cudaError_t e = kernel_op(pNodeParams, &op);
    GLOCK();
    if (e == cudaSuccess && (!node_ok_locked(node) || node->type != cudaGraphNodeTypeKernel))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        node->op = op;
        node->func = pNodeParams->func;
    }
    GUNLOCK();
    RT_RETURN(e);
}

/*
 * Pitched pointers only (CUDA arrays are not modelled): the extent's rows of
 * width bytes, a 2D copy when they are evenly spaced on both sides (one
 * slice, or slices of exactly the extent's height), else its bytes from the
 * first as one range.
 */
cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaMemcpy3DParms *p)
{
    RT_ENTER();
    if (!p)
        RT_RETURN(cudaErrorInvalidValue);
    if (p->srcArray || p->dstArray) {
        fprintf(stderr, "hysim: cudaGraphAddMemcpyNode with CUDA arrays is not supported yet\n");
        RT_RETURN(cudaErrorNotSupported);
    }
    const struct cudaPitchedPtr *s = &p->srcPtr, *d = &p->dstPtr;
    const char *src = (const char *)s->ptr + p->srcPos.x + (p->srcPos.y + p->srcPos.z * s->ysize) * s->pitch;
    char *dst = (char *)d->ptr + p->dstPos.x + (p->dstPos.y + p->dstPos.z * d->ysize) * d->pitch;
    size_t rows = p->extent.height * p->extent.depth;
    int even = p->extent.depth <= 1 || (s->ysize == p->extent.height && d->ysize == p->extent.height);
    hs_stream_op op = {.kind = HS_SOP_COPY, .u.copy = {dst, src, p->extent.width * rows, p->kind}};
    if (even && rows > 1 && p->extent.width) {
        op.u.copy.rows = rows;
        op.u.copy.dpitch = d->pitch;
        op.u.copy.spitch = s->pitch;
    }
    RT_RETURN(add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeMemcpy, &op, NULL));
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dst,
                                     const void *src, size_t count, enum cudaMemcpyKind kind)
{
    RT_ENTER();
    hs_stream_op op = {.kind = HS_SOP_COPY, .u.copy = {dst, src, count, kind}};
    RT_RETURN(add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeMemcpy, &op, NULL));
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                   size_t numDependencies, const struct cudaMemsetParams *p)
{
    RT_ENTER();
    if (!p || !(p->elementSize == 1 || p->elementSize == 2 || p->elementSize == 4) || !p->height)
        RT_RETURN(cudaErrorInvalidValue);
    hs_stream_op op = {.kind = HS_SOP_MEMSET,
                       .u.memset = {p->dst, (size_t)p->elementSize * p->width * p->height, p->height}};
    RT_RETURN(add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeMemset, &op, NULL));
}

/* ---- host nodes: run by the launching thread when the launch reaches them (cudaLaunchHostFunc's way) ---- */

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                 size_t numDependencies, const struct cudaHostNodeParams *pNodeParams)
{
    RT_ENTER();
    if (!pNodeParams || !pNodeParams->fn)
        RT_RETURN(cudaErrorInvalidValue);
    hs_stream_op op = {.kind = HS_SOP_HOST, .u.host = {pNodeParams->fn, pNodeParams->userData}};
    RT_RETURN(add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeHost, &op, NULL));
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *pNodeParams)
{
    RT_ENTER();
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!pNodeParams || !node_ok_locked(node) || node->type != cudaGraphNodeTypeHost)
        e = cudaErrorInvalidValue;
    else
        *pNodeParams = (struct cudaHostNodeParams){node->op.u.host.fn, node->op.u.host.data};
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *pNodeParams)
{
    RT_ENTER();
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!pNodeParams || !pNodeParams->fn || !node_ok_locked(node) || node->type != cudaGraphNodeTypeHost)
        e = cudaErrorInvalidValue;
    else {
        node->op.u.host.fn = pNodeParams->fn;
        node->op.u.host.data = pNodeParams->userData;
    }
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                  size_t numDependencies)
{
    RT_ENTER();
    RT_RETURN(add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeEmpty, NULL, NULL));
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t *pDependencies, size_t numDependencies, cudaEvent_t event)
{
    RT_ENTER();
    hs_stream_op op = {.kind = HS_SOP_EVENT_RECORD, .u.event = event};
    RT_RETURN(event
                  ? add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeEventRecord, &op, NULL)
                  : cudaErrorInvalidValue);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t *pDependencies, size_t numDependencies, cudaEvent_t event)
{
    RT_ENTER();
    hs_stream_op op = {.kind = HS_SOP_WAIT_EVENT, .u.event = event};
    RT_RETURN(event ? add_node(pGraphNode, graph, pDependencies, numDependencies, cudaGraphNodeTypeWaitEvent, &op, NULL)
                    : cudaErrorInvalidValue);
}

/* Whether edge data (NULL: none) are all the default edge's (all zeros): hysim's graphs have no other. */
static int edges_plain(const cudaGraphEdgeData *edgeData, size_t n)
{
    static const cudaGraphEdgeData plain;
    for (size_t i = 0; edgeData && i < n; i++)
        if (memcmp(&edgeData[i], &plain, sizeof plain))
            return 0;
    return 1;
}

/* Edge data other than the default describes programmatic launches, not modelled. */
cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    RT_ENTER();
    cudaError_t e = numDependencies && (!from || !to) ? cudaErrorInvalidValue : cudaSuccess;
    if (e == cudaSuccess && !edges_plain(edgeData, numDependencies))
        e = cudaErrorNotSupported;
    GLOCK();
    if (e == cudaSuccess && !graph_ok_locked(graph))
        e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < numDependencies; i++)
        if (!node_ok_locked(from[i]) || !node_ok_locked(to[i]) || from[i]->owner != graph || to[i]->owner != graph ||
            from[i] == to[i] || hs_nodeset_has(&to[i]->deps, from[i]))
            e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < numDependencies; i++)
        hs_nodeset_add(&to[i]->deps, from[i]);
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *edgeData, size_t numDependencies)
{
    RT_ENTER();
    cudaError_t e = numDependencies && (!from || !to) ? cudaErrorInvalidValue : cudaSuccess;
    if (e == cudaSuccess && !edges_plain(edgeData, numDependencies))
        e = cudaErrorInvalidValue; /* no such edge */
    GLOCK();
    if (e == cudaSuccess && !graph_ok_locked(graph))
        e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < numDependencies; i++) /* every edge must be there */
        if (!node_ok_locked(from[i]) || !node_ok_locked(to[i]) || to[i]->owner != graph ||
            !hs_nodeset_has(&to[i]->deps, from[i]))
            e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < numDependencies; i++)
        nodeset_remove(&to[i]->deps, from[i]);
    GUNLOCK();
    RT_RETURN(e);
}

/*
 * A query's list of nodes: up to *count of them into out (the rest of out
 * NULL and *count the number there are, when it is more than there are), or,
 * with out NULL, their number into *count. edges, where given, get the
 * default edge's data for each node returned (hysim's graphs have no other).
 */
typedef struct node_list {
    cudaGraphNode_t *out;
    cudaGraphEdgeData *edges;
    size_t cap, k;
} node_list;

static void list_put(node_list *l, cudaGraphNode_t n)
{
    if (l->out && l->k < l->cap) {
        l->out[l->k] = n;
        if (l->edges)
            memset(&l->edges[l->k], 0, sizeof *l->edges);
    }
    l->k++;
}

static void list_end(node_list *l, size_t *count)
{
    for (size_t i = l->k; l->out && i < l->cap; i++)
        l->out[i] = NULL;
    if (!l->out || l->k < l->cap)
        *count = l->k;
}

/* The nodes of graph (roots_only: those without dependencies), in creation order. */
static cudaError_t list_nodes(cudaGraph_t graph, cudaGraphNode_t *out, size_t *count, int roots_only)
{
    if (!count)
        return cudaErrorInvalidValue;
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!graph_ok_locked(graph)) {
        e = cudaErrorInvalidValue;
    } else {
        node_list l = {out, NULL, *count, 0};
        for (size_t i = 0; i < graph->nodes.n; i++)
            if (!roots_only || !graph->nodes.v[i]->deps.n)
                list_put(&l, graph->nodes.v[i]);
        list_end(&l, count);
    }
    GUNLOCK();
    return e;
}

/* The nodes node depends on (dependents: those that depend on it, in creation order). */
static cudaError_t list_neighbours(cudaGraphNode_t node, cudaGraphNode_t *out, cudaGraphEdgeData *edges, size_t *count,
                                   int dependents)
{
    if (!count)
        return cudaErrorInvalidValue;
    GLOCK();
    int ok = node_ok_locked(node);
    if (ok) {
        node_list l = {out, edges, *count, 0};
        const hs_nodeset *all = &node->owner->nodes;
        for (size_t i = 0; !dependents && i < node->deps.n; i++)
            list_put(&l, node->deps.v[i]);
        for (size_t i = 0; dependents && i < all->n; i++)
            if (hs_nodeset_has(&all->v[i]->deps, node))
                list_put(&l, all->v[i]);
        list_end(&l, count);
    }
    GUNLOCK();
    return ok ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                         cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{
    RT_ENTER();
    RT_RETURN(list_neighbours(node, pDependencies, edgeData, pNumDependencies, 0));
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                           cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes)
{
    RT_ENTER();
    RT_RETURN(list_neighbours(node, pDependentNodes, edgeData, pNumDependentNodes, 1));
}

/* Every edge, by its head's creation order then its dependencies' order; from and to both, or neither. */
cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                              cudaGraphEdgeData *edgeData, size_t *numEdges)
{
    RT_ENTER();
    if (!numEdges || !from != !to)
        RT_RETURN(cudaErrorInvalidValue);
    GLOCK();
    int ok = graph_ok_locked(graph);
    if (ok) {
        node_list tails = {from, edgeData, *numEdges, 0}, heads = {to, NULL, *numEdges, 0};
        for (size_t i = 0; i < graph->nodes.n; i++)
            for (size_t j = 0; j < graph->nodes.v[i]->deps.n; j++) {
                list_put(&tails, graph->nodes.v[i]->deps.v[j]);
                list_put(&heads, graph->nodes.v[i]);
            }
        list_end(&heads, numEdges);
        list_end(&tails, numEdges);
    }
    GUNLOCK();
    RT_RETURN(ok ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
    RT_ENTER();
    RT_RETURN(list_nodes(graph, nodes, numNodes, 0));
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{
    RT_ENTER();
    RT_RETURN(list_nodes(graph, pRootNodes, pNumRootNodes, 1));
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    RT_ENTER();
    GLOCK();
    int ok = pType && node_ok_locked(node);
    if (ok)
        *pType = node->type;
    GUNLOCK();
    RT_RETURN(ok ? cudaSuccess : cudaErrorInvalidValue);
}

/* Node → its creation index + 1, for graphs of thousands of nodes (the caller clears it). */
static void index_nodes(cudaGraph_t g, hs_ptrmap *m)
{
    for (size_t i = 0; i < g->nodes.n; i++)
        hs_ptrmap_put(m, (uintptr_t)g->nodes.v[i], i + 1);
}

static size_t index_of(const hs_ptrmap *m, cudaGraphNode_t n) { return hs_ptrmap_get(m, (uintptr_t)n) - 1; }

static const char *type_name(enum cudaGraphNodeType t)
{
    static const char *const names[] = {"kernel", "memcpy", "memset",     "host",
                                        "graph",  "empty",  "wait event", "event record"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "other";
}

/*
 * A graph as Graphviz DOT: a node per graph node (its type, a kernel's grid
 * and block, a copy's or memset's bytes) and an edge per dependency. flags
 * (how much detail the real runtime prints) are not distinguished.
 */
cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char *path, unsigned int flags)
{
    (void)flags;
    RT_ENTER();
    if (!path)
        RT_RETURN(cudaErrorInvalidValue);
    GLOCK();
    cudaError_t e = graph_ok_locked(graph) ? cudaSuccess : cudaErrorInvalidValue;
    FILE *f = e == cudaSuccess ? fopen(path, "w") : NULL;
    if (e == cudaSuccess && !f)
        e = cudaErrorOperatingSystem;
    if (f) {
        hs_ptrmap index = {0};
        index_nodes(graph, &index);
        fprintf(f, "digraph cuda_graph {\n");
        for (size_t i = 0; i < graph->nodes.n; i++) {
            cudaGraphNode_t n = graph->nodes.v[i];
            fprintf(f, "  n%zu [label=\"%zu: %s (GPU %d)", i, i, type_name(n->type), n->dev);
            if (n->type == cudaGraphNodeTypeKernel && n->op.kind == HS_SOP_KERNEL)
                fprintf(f, "\\ngrid %ux%ux%u block %ux%ux%u", n->op.u.kernel.grid[0], n->op.u.kernel.grid[1],
                        n->op.u.kernel.grid[2], n->op.u.kernel.block[0], n->op.u.kernel.block[1],
                        n->op.u.kernel.block[2]);
            else if (n->type == cudaGraphNodeTypeMemcpy)
                fprintf(f, "\\n%zu bytes", n->op.u.copy.count);
            else if (n->type == cudaGraphNodeTypeMemset)
                fprintf(f, "\\n%zu bytes", n->op.u.memset.count);
            fprintf(f, "\"];\n");
        }
        for (size_t i = 0; i < graph->nodes.n; i++)
            for (size_t j = 0; j < graph->nodes.v[i]->deps.n; j++)
                fprintf(f, "  n%zu -> n%zu;\n", index_of(&index, graph->nodes.v[i]->deps.v[j]), i);
        fprintf(f, "}\n");
        hs_ptrmap_clear(&index);
        if (fclose(f) != 0)
            e = cudaErrorOperatingSystem;
    }
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    RT_ENTER();
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!pGraphClone || !graph_ok_locked(originalGraph)) {
        e = cudaErrorInvalidValue;
    } else {
        cudaGraph_t c = hs_graph_new_locked();
        const hs_nodeset *orig = &originalGraph->nodes;
        hs_ptrmap index = {0};
        index_nodes(originalGraph, &index);
        for (size_t i = 0; i < orig->n; i++) {
            cudaGraphNode_t n = hs_graph_add_node_locked(c, orig->v[i]->type, &orig->v[i]->op, orig->v[i]->dev, NULL);
            n->func = orig->v[i]->func;
        }
        for (size_t i = 0; i < orig->n; i++)
            for (size_t j = 0; j < orig->v[i]->deps.n; j++)
                hs_nodeset_add(&c->nodes.v[i]->deps, c->nodes.v[index_of(&index, orig->v[i]->deps.v[j])]);
        hs_ptrmap_clear(&index);
        *pGraphClone = c;
    }
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    RT_ENTER();
    GLOCK();
    int ok = node_ok_locked(node);
    if (ok) {
        cudaGraph_t g = node->owner;
        nodeset_remove(&g->nodes, node);
        for (size_t i = 0; i < g->nodes.n; i++)
            nodeset_remove(&g->nodes.v[i]->deps, node);
        node_free_locked(node);
    }
    GUNLOCK();
    RT_RETURN(ok ? cudaSuccess : cudaErrorInvalidValue);
}

/* ---- executable graphs ---- */

typedef struct xnode {
    cudaGraphNode_t from; /* the node it was instantiated from (a key only: it may be gone) */
    enum cudaGraphNodeType type;
    hs_stream_op op;
    int dev;
    size_t chain; /* internal stream it runs on */
    size_t *deps; /* positions in the executable's order */
    size_t ndeps;
    size_t chain_prev; /* the dependency just before it on its chain, or SIZE_MAX */
    cudaEvent_t done;  /* recorded after it when a node of another chain waits for it */
} xnode;

typedef struct chain {
    int dev;
    cudaStream_t stream;
    cudaEvent_t end; /* the launch stream waits for it */
} chain;

struct CUgraphExec_st {
    xnode *nodes; /* topological order */
    size_t n;
    size_t *order_of; /* graph creation index → position in nodes */
    chain *chains;
    size_t nchains;
    cudaEvent_t start; /* recorded on the launch stream; the roots wait for it */
};

/*
 * The creation indices of the graph's nodes in a topological order (Kahn's,
 * first in first out from the roots in creation order); -1 on a cycle.
 */
static int topo_order(cudaGraph_t g, const hs_ptrmap *index, size_t *order)
{
    size_t n = g->nodes.n, done = 0, head = 0;
    size_t *waiting = xcalloc(n, sizeof *waiting); /* dependencies not placed yet */
    size_t *first = xcalloc(n + 1, sizeof *first); /* dependents of i: succ[first[i] .. first[i + 1]) */
    size_t nedges = 0;
    for (size_t i = 0; i < n; i++) {
        waiting[i] = g->nodes.v[i]->deps.n;
        nedges += waiting[i];
        for (size_t j = 0; j < waiting[i]; j++)
            first[index_of(index, g->nodes.v[i]->deps.v[j]) + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    size_t *succ = xcalloc(nedges, sizeof *succ), *fill = xcalloc(n, sizeof *fill);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < g->nodes.v[i]->deps.n; j++) {
            size_t d = index_of(index, g->nodes.v[i]->deps.v[j]);
            succ[first[d] + fill[d]++] = i;
        }
    for (size_t i = 0; i < n; i++)
        if (!waiting[i])
            order[done++] = i;
    while (head < done) {
        size_t v = order[head++];
        for (size_t k = first[v]; k < first[v + 1]; k++)
            if (--waiting[succ[k]] == 0)
                order[done++] = succ[k];
    }
    free(waiting);
    free(first);
    free(succ);
    free(fill);
    return done == n ? 0 : -1;
}

static void exec_free(cudaGraphExec_t x)
{
    for (size_t i = 0; i < x->n; i++) {
        free(x->nodes[i].deps);
        if (x->nodes[i].done)
            hs_client_event_destroy(x->nodes[i].done);
    }
    for (size_t c = 0; c < x->nchains; c++) {
        if (x->chains[c].stream)
            hs_client_stream_destroy(x->chains[c].stream);
        if (x->chains[c].end)
            hs_client_event_destroy(x->chains[c].end);
    }
    if (x->start)
        hs_client_event_destroy(x->start);
    free(x->nodes);
    free(x->order_of);
    free(x->chains);
    free(x);
}

/*
 * Chains: a node continues the chain of its first dependency that is still
 * that chain's last node on the same device, or starts a new one.
 */
static void assign_chains(cudaGraphExec_t x)
{
    size_t *last = xcalloc(x->n, sizeof *last);
    x->chains = xcalloc(x->n, sizeof *x->chains);
    for (size_t i = 0; i < x->n; i++) {
        xnode *v = &x->nodes[i];
        v->chain_prev = SIZE_MAX;
        for (size_t j = 0; j < v->ndeps && v->chain_prev == SIZE_MAX; j++) {
            xnode *d = &x->nodes[v->deps[j]];
            if (last[d->chain] == v->deps[j] && d->dev == v->dev) {
                v->chain = d->chain;
                v->chain_prev = v->deps[j];
            }
        }
        if (v->chain_prev == SIZE_MAX) {
            v->chain = x->nchains++;
            x->chains[v->chain].dev = v->dev;
        }
        last[v->chain] = i;
    }
    free(last);
}

/* Internal streams and events, created on their devices. */
static cudaError_t create_resources(cudaGraphExec_t x)
{
    int cur = hs_client_get_device();
    cudaError_t e = hs_client_event_create(cudaEventDisableTiming, &x->start);
    for (size_t c = 0; e == cudaSuccess && c < x->nchains; c++) {
        e = hs_client_set_device(x->chains[c].dev);
        if (e == cudaSuccess)
            e = hs_client_stream_create(cudaStreamNonBlocking, 0, &x->chains[c].stream);
        if (e == cudaSuccess)
            e = hs_client_event_create(cudaEventDisableTiming, &x->chains[c].end);
    }
    for (size_t i = 0; e == cudaSuccess && i < x->n; i++)
        for (size_t j = 0; e == cudaSuccess && j < x->nodes[i].ndeps; j++) {
            xnode *d = &x->nodes[x->nodes[i].deps[j]];
            if (x->nodes[i].deps[j] != x->nodes[i].chain_prev && !d->done)
                e = hs_client_event_create(cudaEventDisableTiming, &d->done);
        }
    hs_client_set_device(cur);
    return e;
}

static cudaError_t instantiate(cudaGraphExec_t *out, cudaGraph_t g)
{
    if (!out)
        return cudaErrorInvalidValue;
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    GLOCK();
    if (!graph_ok_locked(g)) {
        GUNLOCK();
        return cudaErrorInvalidValue;
    }
    size_t n = g->nodes.n;
    cudaGraphExec_t x = xcalloc(1, sizeof *x);
    x->n = n;
    x->nodes = xcalloc(n, sizeof *x->nodes);
    x->order_of = xcalloc(n, sizeof *x->order_of);
    size_t *order = xcalloc(n, sizeof *order);
    hs_ptrmap index = {0};
    index_nodes(g, &index);
    if (topo_order(g, &index, order) != 0) {
        GUNLOCK();
        hs_ptrmap_clear(&index);
        free(order);
        exec_free(x);
        return cudaErrorInvalidValue; /* a cycle */
    }
    for (size_t p = 0; p < n; p++)
        x->order_of[order[p]] = p;
    for (size_t p = 0; p < n; p++) {
        cudaGraphNode_t src = g->nodes.v[order[p]];
        xnode *v = &x->nodes[p];
        *v = (xnode){.from = src, .type = src->type, .op = src->op, .dev = src->dev};
        v->ndeps = src->deps.n;
        v->deps = xcalloc(v->ndeps, sizeof *v->deps);
        for (size_t j = 0; j < v->ndeps; j++)
            v->deps[j] = x->order_of[index_of(&index, src->deps.v[j])];
    }
    GUNLOCK();
    hs_ptrmap_clear(&index);
    free(order);
    assign_chains(x);
    e = create_resources(x);
    if (e != cudaSuccess) {
        exec_free(x);
        return e;
    }
    GLOCK();
    hs_ptrmap_put(&g_execs, (uintptr_t)x, 1);
    GUNLOCK();
    *out = x;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_ENTER();
    (void)flags; /* upload, auto-free, priorities: nothing to prepare in the simulation */
    RT_RETURN(instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_ENTER();
    if (flags & cudaGraphInstantiateFlagDeviceLaunch) {
        fprintf(stderr, "hysim: cudaGraphInstantiateFlagDeviceLaunch is not supported yet\n");
        RT_RETURN(cudaErrorNotSupported);
    }
    RT_RETURN(instantiate(pGraphExec, graph));
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                           cudaGraphInstantiateParams *instantiateParams)
{
    RT_ENTER();
    if (!instantiateParams)
        RT_RETURN(cudaErrorInvalidValue);
    cudaError_t e = (instantiateParams->flags & cudaGraphInstantiateFlagDeviceLaunch) ? cudaErrorNotSupported
                                                                                      : instantiate(pGraphExec, graph);
    instantiateParams->errNode_out = NULL;
    instantiateParams->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
    RT_RETURN(e);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *instantiateParams);
cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams *instantiateParams)
{
    return cudaGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    RT_ENTER();
    GLOCK();
    int ok = graphExec && hs_ptrmap_del(&g_execs, (uintptr_t)graphExec);
    GUNLOCK();
    if (ok)
        exec_free(graphExec);
    RT_RETURN(ok ? cudaSuccess : cudaErrorInvalidValue);
}

/* ---- launch ---- */

/* Maps a captured NCCL group number to this launch's own (groups[2k] → groups[2k+1]). */
static uint64_t launch_group(uint64_t captured, uint64_t *groups, size_t *ngroups)
{
    if (!captured)
        return 0;
    for (size_t i = 0; i < *ngroups; i++)
        if (groups[2 * i] == captured)
            return groups[2 * i + 1];
    groups[2 * *ngroups] = captured;
    groups[2 * *ngroups + 1] = REPLAY_GROUP_BASE + atomic_fetch_add(&g_replay_groups, 1) + 1;
    return groups[2 * (*ngroups)++ + 1];
}

/* Issues one node's op on stream s (hs_graph_lock held: a collective takes the next sequence number). */
static cudaError_t issue(const xnode *v, cudaStream_t s, uint64_t *groups, size_t *ngroups)
{
    const hs_stream_op *op = &v->op;
    switch (v->type == cudaGraphNodeTypeEmpty ? -1 : (int)op->kind) {
    case -1: return cudaSuccess;
    case HS_SOP_KERNEL:
        return hs_client_launch(op->u.kernel.kernel, op->u.kernel.grid, op->u.kernel.block, op->u.kernel.shared, s,
                                NULL);
    case HS_SOP_GEMM: return hs_client_gemm(op->u.gemm.name, &op->u.gemm.g, s);
    case HS_SOP_LIBRARY:
        return op->u.library.random ? hs_client_random_kernel(op->u.library.name, &op->u.library.r, s)
                                    : hs_client_library_kernel(op->u.library.name, s);
    case HS_SOP_COPY: {
        /* a graph's launch never waits for its copies, whatever their host memory */
        if (op->u.copy.rows > 1) {
            size_t width = op->u.copy.count / op->u.copy.rows;
            cudaError_t e = hs_client_copy_2d(op->u.copy.dst, op->u.copy.src, op->u.copy.count, op->u.copy.rows,
                                              op->u.copy.kind, s, 0, 0);
            if (e == cudaSuccess)
                hs_rt_rows_data(op->u.copy.dst, op->u.copy.dpitch, op->u.copy.src, op->u.copy.spitch, width,
                                op->u.copy.rows);
            return e;
        }
        cudaError_t e =
            hs_client_copy(op->u.copy.dst, op->u.copy.src, op->u.copy.count, op->u.copy.kind, s, 0, HS_COPY_WRITE_HOST);
        if (e == cudaSuccess)
            hs_rt_managed_data(op->u.copy.dst, op->u.copy.src, op->u.copy.count);
        return e;
    }
    case HS_SOP_MEMSET:
        return hs_client_memset_2d(op->u.memset.ptr, op->u.memset.count, op->u.memset.rows ? op->u.memset.rows : 1, s);
    case HS_SOP_EVENT_RECORD: return hs_client_event_record(op->u.event, s);
    case HS_SOP_WAIT_EVENT: return hs_client_stream_wait_event(s, op->u.event);
    case HS_SOP_HOST: { /* as cudaLaunchHostFunc: once the chain's stream has reached it (the launcher waits) */
        cudaError_t e = hs_client_stream_synchronize(s);
        if (e == cudaSuccess)
            op->u.host.fn(op->u.host.data);
        return e;
    }
    case HS_SOP_COLLECTIVE:
        return hs_client_collective(op->u.coll.comm_key, op->u.coll.rank, op->u.coll.device,
                                    hs_capture_replay_seq_locked(op), op->u.coll.kind, op->u.coll.bytes,
                                    op->u.coll.root, launch_group(op->u.coll.group, groups, ngroups), op->u.coll.algo,
                                    op->u.coll.proto, s, NULL, NULL); /* a graph's replay carries no values */
    }
    return cudaErrorInvalidValue;
}

static cudaError_t launch_locked(cudaGraphExec_t x, cudaStream_t stream)
{
    uint64_t *groups = xcalloc(2 * x->n, sizeof *groups);
    size_t ngroups = 0;
    cudaError_t e = hs_client_event_record(x->start, stream);
    for (size_t i = 0; e == cudaSuccess && i < x->n; i++) {
        const xnode *v = &x->nodes[i];
        cudaStream_t s = x->chains[v->chain].stream;
        if (v->ndeps == 0)
            e = hs_client_stream_wait_event(s, x->start);
        for (size_t j = 0; e == cudaSuccess && j < v->ndeps; j++)
            if (v->deps[j] != v->chain_prev)
                e = hs_client_stream_wait_event(s, x->nodes[v->deps[j]].done);
        if (e == cudaSuccess)
            e = issue(v, s, groups, &ngroups);
        if (e == cudaSuccess && v->done)
            e = hs_client_event_record(v->done, s);
    }
    for (size_t c = 0; e == cudaSuccess && c < x->nchains; c++) {
        e = hs_client_event_record(x->chains[c].end, x->chains[c].stream);
        if (e == cudaSuccess)
            e = hs_client_stream_wait_event(stream, x->chains[c].end);
    }
    free(groups);
    return e;
}

static cudaError_t graph_launch(cudaGraphExec_t x, cudaStream_t stream)
{
    cudaError_t e = hs_client_start();
    if (e != cudaSuccess)
        return e;
    int dev, prio;
    unsigned flags;
    e = hs_client_stream_info(stream, &dev, &flags, &prio);
    if (e != cudaSuccess)
        return e;
    if (hs_capture_stream_active(stream)) {
        fprintf(stderr, "hysim: cudaGraphLaunch into a capturing stream (a child graph) is not supported yet\n");
        return cudaErrorNotSupported;
    }
    GLOCK();
    if (!x || !hs_ptrmap_get(&g_execs, (uintptr_t)x)) {
        e = cudaErrorInvalidValue;
    } else {
        hs_client_charge_call(HS_CALL_KERNEL_LAUNCH); /* first: the replayed ops cost nothing more */
        hs_graph_replaying = 1;
        hs_client_graph_launch(1);
        e = launch_locked(x, stream);
        hs_client_graph_launch(0);
        hs_graph_replaying = 0;
    }
    GUNLOCK();
    return e;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(graph_launch(graphExec, stream));
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(graph_launch(graphExec, stream ? stream : cudaStreamPerThread));
}

/* Nothing to upload to a simulated GPU: checks the handles. */
static cudaError_t graph_upload(cudaGraphExec_t x, cudaStream_t stream)
{
    int dev, prio;
    unsigned flags;
    cudaError_t e = hs_client_stream_info(stream, &dev, &flags, &prio);
    GLOCK();
    if (e == cudaSuccess && (!x || !hs_ptrmap_get(&g_execs, (uintptr_t)x)))
        e = cudaErrorInvalidValue;
    GUNLOCK();
    return e;
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(graph_upload(graphExec, stream));
}

cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);
cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    RT_ENTER();
    RT_RETURN(graph_upload(graphExec, stream ? stream : cudaStreamPerThread));
}

/* ---- updates ---- */

/* Why hGraph cannot update x: cudaGraphExecUpdateSuccess when its topology and node types match. */
static enum cudaGraphExecUpdateResult update_check_locked(cudaGraphExec_t x, cudaGraph_t g, cudaGraphNode_t *err)
{
    if (g->nodes.n != x->n)
        return cudaGraphExecUpdateErrorTopologyChanged;
    hs_ptrmap index = {0};
    index_nodes(g, &index);
    enum cudaGraphExecUpdateResult r = cudaGraphExecUpdateSuccess;
    for (size_t i = 0; i < x->n && r == cudaGraphExecUpdateSuccess; i++) {
        cudaGraphNode_t n = g->nodes.v[i];
        const xnode *v = &x->nodes[x->order_of[i]];
        *err = n;
        if (n->type != v->type || (n->type == cudaGraphNodeTypeKernel && n->op.kind != v->op.kind))
            r = cudaGraphExecUpdateErrorNodeTypeChanged;
        else if (n->deps.n != v->ndeps || n->dev != v->dev)
            r = cudaGraphExecUpdateErrorTopologyChanged;
        for (size_t j = 0; r == cudaGraphExecUpdateSuccess && j < n->deps.n; j++)
            if (x->order_of[index_of(&index, n->deps.v[j])] != v->deps[j])
                r = cudaGraphExecUpdateErrorTopologyChanged;
    }
    hs_ptrmap_clear(&index);
    if (r == cudaGraphExecUpdateSuccess)
        *err = NULL;
    return r;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo)
{
    RT_ENTER();
    cudaError_t e = cudaSuccess;
    GLOCK();
    if (!resultInfo || !hGraphExec || !hs_ptrmap_get(&g_execs, (uintptr_t)hGraphExec) || !graph_ok_locked(hGraph)) {
        e = cudaErrorInvalidValue;
    } else {
        cudaGraphNode_t err = NULL;
        enum cudaGraphExecUpdateResult r = update_check_locked(hGraphExec, hGraph, &err);
        resultInfo->result = r;
        resultInfo->errorNode = err;
        resultInfo->errorFromNode = NULL;
        if (r != cudaGraphExecUpdateSuccess)
            e = cudaErrorGraphExecUpdateFailure;
        for (size_t i = 0; e == cudaSuccess && i < hGraphExec->n; i++)
            hGraphExec->nodes[hGraphExec->order_of[i]].op = hGraph->nodes.v[i]->op;
    }
    GUNLOCK();
    RT_RETURN(e);
}

/* The node of executable graph x instantiated from node, or NULL (hs_graph_lock held). */
static xnode *exec_node_locked(cudaGraphExec_t x, cudaGraphNode_t node)
{
    if (!x || !hs_ptrmap_get(&g_execs, (uintptr_t)x))
        return NULL;
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].from == node)
            return &x->nodes[i];
    return NULL;
}

cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                           const struct cudaHostNodeParams *pNodeParams)
{
    RT_ENTER();
    cudaError_t e = pNodeParams && pNodeParams->fn ? cudaSuccess : cudaErrorInvalidValue;
    GLOCK();
    xnode *v = e == cudaSuccess ? exec_node_locked(hGraphExec, node) : NULL;
    if (e == cudaSuccess && (!v || v->type != cudaGraphNodeTypeHost))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        v->op.u.host.fn = pNodeParams->fn;
        v->op.u.host.data = pNodeParams->userData;
    }
    GUNLOCK();
    RT_RETURN(e);
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *pNodeParams)
{
    RT_ENTER();
    hs_stream_op op;
    cudaError_t e = kernel_op(pNodeParams, &op);
    GLOCK();
    xnode *v = e == cudaSuccess ? exec_node_locked(hGraphExec, node) : NULL;
    if (e == cudaSuccess && (!v || v->type != cudaGraphNodeTypeKernel || v->op.kind != HS_SOP_KERNEL))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        v->op = op;
    GUNLOCK();
    RT_RETURN(e);
}
