"""The attention backward's tuning on the host (``attention_backward._tune``) on the CPU: the
best configuration of each way to sum dQ, and the separate pass's dQ configuration computing
delta where its gradients were checked that way, are timed as whole passes, in turn, as
called (``retime.called_times``), and the fastest is kept; one way alone is not timed;
``TLX_AUTOTUNE_LOG`` gives each part's time. The kernels' tuners are stood in for: their
timing needs a GPU."""

import re

import pytest
import torch
from tlx_kernels.hopper import attention_backward as bwd
from tlx_kernels.hopper import attention_backward_delta, attention_dq
from tlx_kernels.hopper.attention_backward_config import Config

SPLIT = Config(64, 128, 2, dq_pass="split", p_in_smem=True, pipelined=True, scores_by_query=True)
SEPARATE = Config(64, 128, 2, dq_pass="separate", p_in_smem=True, pipelined=True)
DQ_CONFIG = attention_dq.grid_choices(128)[0]
COMPUTING_DELTA = DQ_CONFIG.replace(computes_delta=True)


@pytest.fixture
def stood_in(monkeypatch):
    """The kernels' tuners stood in for: each way's best is SPLIT or SEPARATE, the dQ
    kernel's DQ_CONFIG; ``timed`` records each call of ``called_times`` and answers with
    ``times``."""
    tuned = {("split",): SPLIT, ("separate",): SEPARATE}
    monkeypatch.setattr(bwd, "_tune_kernel", lambda tensors, delta, passes: tuned[passes])
    monkeypatch.setattr(attention_backward_delta, "delta", lambda o3, do3: "delta")
    monkeypatch.setattr(attention_dq, "compute_dq", lambda *args, **kwargs: (None, DQ_CONFIG))
    state = {"timed": [], "times": {}}

    def called_times(passes, most_rounds):
        state["timed"].append((passes, most_rounds))
        return {candidate: state["times"][candidate] for candidate in passes}

    monkeypatch.setattr(bwd, "called_times", called_times)
    return state


def tensors(head_dim=128):
    q3 = torch.zeros(4, 256, head_dim)
    return (q3, q3, q3, q3, q3, torch.zeros(4, 256), head_dim**-0.5, True)


@pytest.mark.parametrize("fastest", [0, 1, 2])
def test_the_fastest_whole_pass_is_kept(stood_in, fastest):
    candidates = [(SPLIT, None), (SEPARATE, DQ_CONFIG), (SEPARATE, COMPUTING_DELTA)]
    assert COMPUTING_DELTA in attention_dq.delta_variants(128)
    stood_in["times"] = {c: 2.0 + i for i, c in enumerate(candidates)}
    stood_in["times"][candidates[fastest]] = 1.0
    inputs = tensors()
    assert bwd._tune(inputs, ("separate", "split")) == candidates[fastest]
    ((passes, most_rounds),) = stood_in["timed"]
    assert list(passes) == candidates and most_rounds == bwd.CANDIDATE_ROUNDS
    for candidate, run in passes.items():
        assert run.func is bwd._run and run.args == (inputs, *candidate)


def test_a_dq_configuration_not_checked_computing_delta_is_timed_only_behind_the_preprocess(
    stood_in, monkeypatch
):
    unchecked = attention_dq.DqConfig(128, 64, 2)
    assert unchecked.replace(computes_delta=True) not in attention_dq.delta_variants(128)
    monkeypatch.setattr(attention_dq, "compute_dq", lambda *args, **kwargs: (None, unchecked))
    stood_in["times"] = {(SPLIT, None): 2.0, (SEPARATE, unchecked): 1.0}
    assert bwd._tune(tensors(), ("separate", "split")) == (SEPARATE, unchecked)
    ((passes, _),) = stood_in["timed"]
    assert list(passes) == [(SPLIT, None), (SEPARATE, unchecked)]


def test_one_way_to_sum_dq_is_not_timed(stood_in):
    assert bwd._tune(tensors(), ("split",)) == (SPLIT, None)
    assert stood_in["timed"] == []


def test_the_log_gives_each_parts_time_and_the_choice(stood_in, monkeypatch, capfd):
    monkeypatch.setenv("TLX_AUTOTUNE_LOG", "1")
    candidates = [(SPLIT, None), (SEPARATE, DQ_CONFIG), (SEPARATE, COMPUTING_DELTA)]
    stood_in["times"] = {c: 2.0 - i for i, c in enumerate(candidates)}
    bwd._tune(tensors(), ("separate", "split"))
    (line,) = capfd.readouterr().err.splitlines()
    assert line.startswith(
        "attention backward: tuned q (4, 256, 128), k (4, 256, 128), causal=True in "
    )
    parts = re.findall(r"(split|separate|dQ kernel|3 passes compared) \d+\.\d\d s", line)
    assert parts == ["split", "separate", "dQ kernel", "3 passes compared"]
    assert line.endswith(f"; chose {SEPARATE}, {COMPUTING_DELTA}")
    bwd._tune(tensors(), ("split",))
    assert re.search(r"in \d+\.\d\d s: split \d+\.\d\d s; chose ", capfd.readouterr().err)
