"""The RL memory plan: exact bytes for weights, gradients and Adam's states per GPU under the
sharding, against the review's 7B arithmetic; refusals name the GiB and what would fit."""

import pytest

from backend.errors import UserError
from backend.rl.memory import GiB, ModelShape, Setup, check_memory, plan_memory, setup_of
from backend.rl.spec import RLSpec

# Qwen2.5-7B's config: 28 layers, hidden 3584, MLP 18944, vocab 152064, 4 KV heads of 128
QWEN_7B = ModelShape(params=7_615_616_512, hidden=3584, layers=28, intermediate=18944, vocab=152064, kv_dim=512,
                     root=2 * 152064 * 3584 + 3584)  # untied embeddings and lm_head, final norm  # fmt: skip
H100 = 85_520_809_984  # torch.cuda.get_device_properties(0).total_memory of an 80 GB card
H200 = 150_754_820_096  # of a 141 GB card


def rl_spec(**kw) -> RLSpec:
    fields = dict(base="b", output_dir="o", gpus=8, use_vllm=True, num_generations=8, per_device_train_batch_size=8,
                  max_completion_length=1024)  # fmt: skip
    return RLSpec(**(fields | kw))


def test_seven_b_full_fine_tuning_on_eight_80_gb_cards_is_refused_without_sharding_and_fits_with_fsdp():
    ddp = setup_of(rl_spec(sharding="ddp"), H100, bf16=True, checkpointing=True)
    plan = plan_memory(QWEN_7B, ddp)
    # the review's figure: float32 weights + gradients + Adam's two moments, 16 bytes a parameter, a whole copy each
    states = plan.per_gpu["weights"] + plan.per_gpu["gradients"] + plan.per_gpu["optimizer"]
    assert states == 16 * QWEN_7B.params and round(states / GiB, 1) == 113.5
    assert plan.per_gpu["vllm"] == 0.3 * H100  # TRL's colocated vLLM share
    with pytest.raises(
        UserError, match=r"RL memory plan: \d+\.\d GiB per GPU .* of 79\.6 GiB.*would fit: --sharding fsdp"
    ):
        check_memory(QWEN_7B, ddp, use_vllm=True)
    fsdp = setup_of(rl_spec(), H100, bf16=True, checkpointing=True)
    plan = check_memory(QWEN_7B, fsdp, use_vllm=True)
    assert plan.per_gpu["gradients"] + plan.per_gpu["optimizer"] == 12 * QWEN_7B.params / 8
    assert plan.per_gpu["weights"] == 4 * QWEN_7B.params / 8
    assert plan.fits and plan.total < 0.95 * H100


def test_the_seven_b_plan_on_eight_h100s_has_the_review_s_terms():
    """Issue #58's figures for Qwen2.5-7B, 8 x H100, FSDP, bf16: the root unit (1.09 B parameters)
    gathered with its gradients and a layer gathered, the next prefetched, with one layer's
    gradients: about 5.4 GiB; the CUDA runtime 2 GiB; TRL's tiled LM head, not B x C x V logits;
    host memory at save about 91 GB (float32 weights and Adam's moments gathered on rank 0)."""
    plan = check_memory(QWEN_7B, setup_of(rl_spec(), H100, bf16=True, checkpointing=True), use_vllm=True)
    root, layer = 1_089_998_336, (7_615_616_512 - 1_089_998_336) / 28  # by hand from the config
    assert round(root / 1e9, 2) == 1.09
    assert plan.per_gpu["gathered"] == 2 * (root + 2 * layer) + 2 * (root + layer)
    assert round(plan.per_gpu["gathered"] / GiB, 1) == 5.4
    assert plan.per_gpu["cuda"] == 2 * GiB
    tokens = 8 * (1024 + 1024)  # a micro-batch: 8 completions of the prompt allowance + 1024 tokens
    head = 4096 * 32768 * 2 + 7 * 4 * tokens + 4 * tokens * 3584 + 4 * 152064 * 3584
    assert plan.per_gpu["lm_head"] == head
    assert head < 8 * 1024 * 152064 * 6  # what full logits and their float32 log-probs would take
    assert round(plan.host["at save"] / 1e9) == 91 and plan.host["at load"] == 4 * QWEN_7B.params
    assert plan.host["at resume"] == 8 * 4 * QWEN_7B.params
    assert plan.fits and round(plan.total / GiB, 1) == 53.6  # the yes stands: 8 x H100 fits


def test_one_card_names_the_settings_that_would_fit():
    one = setup_of(rl_spec(gpus=1), H200, bf16=True, checkpointing=True)
    with pytest.raises(UserError) as err:
        check_memory(QWEN_7B, one, use_vllm=True)
    line = str(err.value)
    assert "\n" not in line and "over 95% of the card; would fit: 2 training GPUs with --sharding fsdp" in line
    assert "--lora-rank 16" in line
    lora = plan_memory(QWEN_7B, Setup(**(one.__dict__ | {"lora_rank": 16})))
    assert lora.fits and lora.per_gpu["weights"] == 2 * QWEN_7B.params + 4 * 16 * 28 * (
        2 * 3584 + 2 * (3584 + 512) + 2 * 3584 + 2 * (3584 + 18944) + 18944 + 3584
    )


@pytest.mark.slow
def test_the_shape_is_read_from_the_checkpoint(tmp_path):
    from transformers import AutoModelForCausalLM

    from backend.lab.tiny import make_tiny_checkpoint

    folder = make_tiny_checkpoint(tmp_path / "m")
    model = AutoModelForCausalLM.from_pretrained(folder)
    shape = ModelShape.of(folder)
    assert shape.params == sum(p.numel() for p in model.parameters())  # a tied lm_head counted once
    c = model.config
    assert (shape.hidden, shape.layers, shape.vocab) == (c.hidden_size, c.num_hidden_layers, c.vocab_size)
    assert shape.kv_dim == c.num_key_value_heads * (c.hidden_size // c.num_attention_heads)
    # the root unit: every parameter outside the decoder layers, a tied lm_head once
    assert shape.root == sum(p.numel() for n, p in model.named_parameters() if ".layers." not in n)
