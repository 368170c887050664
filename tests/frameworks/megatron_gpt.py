"""A GPT trained with Megatron-Core as its users write a training loop
(Megatron-Core ships the pieces, not a script): tensor parallel 2 with
sequence parallelism, pipeline parallel 2 with the interleaved schedule
(2 virtual stages per rank), data parallel over the rest, Megatron's DDP
and distributed optimizer, gradient clipping on. Tokens are generated.
Launched with torchrun on 8 GPUs; prints Megatron-LM's iteration line.
TP, PP and VPP may be given (bench/real runs TP 2 x PP 2 on 4 GPUs and
TP 1 x PP 1 on one, where VPP 1 means no interleaving), and SP 0 to leave
sequence parallelism off (it is on wherever TP > 1).
usage: megatron_gpt.py [STEPS [TP PP VPP [SP]]]"""
import os
import sys
import time

import torch
from megatron.core import parallel_state as ps
from megatron.core import tensor_parallel
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig, finalize_model_grads
from megatron.core.models.gpt import GPTModel
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
from megatron.core.pipeline_parallel import get_forward_backward_func
from megatron.core.transformer.module import Float16Module
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules, get_num_layers_to_build
from megatron.core.transformer.transformer_config import TransformerConfig

TP, PP, VPP = (int(a) for a in sys.argv[2:5]) if len(sys.argv) > 4 else (2, 2, 2)
LAYERS, DIM, HEADS, VOCAB, SEQ = 8, 512, 8, 4096, 256
MICRO_BATCH, MICRO_BATCHES = 2, 4
SEQUENCE_PARALLEL = TP > 1 and (len(sys.argv) < 6 or sys.argv[5] != "0")


class SequenceParallelLayerNorm(torch.nn.LayerNorm):
    """torch's LayerNorm in a layer spec with sequence parallelism. Megatron-Core's norms for it are Apex's and
    Transformer Engine's (neither built on PyPI; its wrapper of torch's refuses it: docs/frameworks.md). Like
    theirs, its parameters say `sequence_parallel`, so that Megatron all-reduces their gradients over the
    tensor-parallel group, each rank having normed its part of the sequence."""

    def __init__(self, config, hidden_size, eps=1e-5, **_):
        super().__init__(hidden_size, eps=eps)
        for p in self.parameters():
            p.sequence_parallel = config.sequence_parallel


def layer_spec(config, stage):
    """Megatron-Core's local GPT layer, with that norm before attention, before the MLP and at the end."""
    layer = get_gpt_layer_local_spec()
    layer.submodules.input_layernorm = SequenceParallelLayerNorm
    layer.submodules.pre_mlp_layernorm = SequenceParallelLayerNorm
    layers = get_num_layers_to_build(config, vp_stage=stage, pp_rank=ps.get_pipeline_model_parallel_rank())
    return TransformerBlockSubmodules(layer_specs=[layer] * layers, layer_norm=SequenceParallelLayerNorm)


def build(config):
    """One model chunk per virtual stage of this pipeline rank."""
    chunks = []
    for v in range(VPP):
        stage = v if VPP > 1 else None
        gpt = GPTModel(config=config, transformer_layer_spec=layer_spec(config, stage), vocab_size=VOCAB,
                       max_sequence_length=SEQ, pre_process=ps.is_pipeline_first_stage(False, stage),
                       post_process=ps.is_pipeline_last_stage(False, stage), vp_stage=stage).cuda()
        gpt = Float16Module(config, gpt)  # bf16 in, as Megatron-LM wraps its model
        ddp = DistributedDataParallelConfig(grad_reduce_in_fp32=True, use_distributed_optimizer=True)
        chunks.append(DistributedDataParallel(config=config, ddp_config=ddp, module=gpt,
                                              disable_bucketing=v > 0))
    return chunks


def batches(seed):
    """Micro-batches of generated tokens, the same on every rank of a tensor-parallel group."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        ids = torch.randint(0, VOCAB, (MICRO_BATCH, SEQ + 1), generator=gen)
        yield {"tokens": ids[:, :-1].cuda(), "labels": ids[:, 1:].cuda(),
               "position_ids": torch.arange(SEQ).expand(MICRO_BATCH, SEQ).cuda()}


def forward_step(data, model):
    b = next(data)
    losses = model(b["tokens"], b["position_ids"], None, labels=b["labels"])

    def loss_func(per_token):
        loss = per_token.float().mean()
        return loss, {"lm loss": loss.detach()}

    return losses, loss_func


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    torch.distributed.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    virtual = VPP if VPP > 1 else None
    ps.initialize_model_parallel(tensor_model_parallel_size=TP, pipeline_model_parallel_size=PP,
                                 virtual_pipeline_model_parallel_size=virtual)
    tensor_parallel.model_parallel_cuda_manual_seed(1234)
    config = TransformerConfig(num_layers=LAYERS, hidden_size=DIM, num_attention_heads=HEADS, bf16=True,
                               params_dtype=torch.bfloat16, pipeline_dtype=torch.bfloat16,
                               tensor_model_parallel_size=TP, pipeline_model_parallel_size=PP,
                               virtual_pipeline_model_parallel_size=virtual, sequence_parallel=SEQUENCE_PARALLEL)
    chunks = build(config)
    config.finalize_model_grads_func = finalize_model_grads
    # the interleaved schedule takes one per chunk, the others one
    config.no_sync_func = [c.no_sync for c in chunks] if VPP > 1 else chunks[0].no_sync
    optimizer = get_megatron_optimizer(OptimizerConfig(optimizer="adam", lr=3e-4, bf16=True, clip_grad=1.0,
                                                       use_distributed_optimizer=True), chunks)
    dp = ps.get_data_parallel_world_size()
    if torch.distributed.get_rank() == 0:
        params = sum(p.numel() for c in chunks for p in c.parameters())
        print(f"megatron: TP {TP} x PP {PP} (virtual {VPP}) x DP {dp}, {MICRO_BATCHES} micro-batches of "
              f"{MICRO_BATCH} x {SEQ} tokens per step; rank 0 holds {params} parameters; sequence parallel: "
              f"{'on' if SEQUENCE_PARALLEL else 'off'}", flush=True)
    data = [batches(ps.get_data_parallel_rank()) for _ in range(VPP)]
    forward_backward = get_forward_backward_func()
    for it in range(1, steps + 1):
        start, cpu = time.perf_counter(), time.process_time()
        for c in chunks:
            c.zero_grad_buffer()
        optimizer.zero_grad()
        forward_backward(forward_step_func=forward_step, data_iterator=data, model=chunks,
                         num_microbatches=MICRO_BATCHES, seq_length=SEQ, micro_batch_size=MICRO_BATCH,
                         forward_only=False)
        ok, grad_norm, _ = optimizer.step()
        torch.cuda.synchronize()
        ms, cpu_ms = 1e3 * (time.perf_counter() - start), 1e3 * (time.process_time() - cpu)
        if torch.distributed.get_rank() == 0:
            print(f" iteration {it:8d}/{steps:8d} | elapsed time per iteration (ms): {ms:.1f} | "
                  f"global batch size: {MICRO_BATCH * MICRO_BATCHES * dp:5d} | grad norm: {grad_norm:.3f} | "
                  f"skipped: {0 if ok else 1} | max allocated (MiB): {torch.cuda.max_memory_allocated() / 2**20:.1f} | "
                  f"process CPU time (ms): {cpu_ms:.1f}",
                  flush=True)
    ps.destroy_model_parallel()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
