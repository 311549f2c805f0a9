"""Random tensor programs (tests/unit/fuzz_programs.py) against a float64
numpy model: a fixed set of seeds, and the seeds that once failed.

For a long run: ``python tests/unit/fuzz_programs.py --cases 2000 --steps 16``.
"""

from __future__ import annotations

import pytest

from fuzz_programs import check

# programs that once failed, with their step counts: a scan over a dim that its
# input's view splits (group-reduces could form no kernel); the variance of a
# broadcast value (a sum over a vectorized dim its input does not vary along
# counted each lane once per loop trip)
REGRESSIONS = [(10105, 16), (20172, 14)]


@pytest.mark.parametrize("seed", range(24))
def test_random_programs_agree_with_numpy(seed):
    check(seed, steps=10)


@pytest.mark.parametrize("seed, steps", REGRESSIONS)
def test_programs_that_once_failed(seed, steps):
    check(seed, steps)


def test_sums_of_broadcast_values_count_every_lane():
    import numpy as np

    from mlfuse import Tensor

    a = np.array([0.3, -1.2, 2.5], np.float32)
    assert Tensor(a).sum(-1, keepdim=True).expand(4).var(-1).item() == 0.0
    for n in (4, 8, 13, 64):
        got = Tensor(a).reshape(3, 1).expand(3, n).sum(1).numpy()
        np.testing.assert_allclose(got, a.astype(np.float64) * n, rtol=1e-6)


def _gpu_devices() -> list[str]:
    from mlfuse.targets import get_target

    return ["cuda_sim"] + (["cuda_emu"] if get_target("cuda_emu").available() else [])


@pytest.mark.parametrize("device", _gpu_devices())
@pytest.mark.parametrize("seed", range(73000, 73006))
def test_random_programs_through_the_gpu_mapping(seed, device):
    """The same programs on the GPU devices that run anywhere: cuda_sim checks
    the grid plans against numpy, cuda_emu the kernels as lowered for NVVM
    (shuffles, shared memory, barriers) with its bounds, alignment and race
    checks."""
    from mlfuse.targets import set_default_device

    set_default_device(device)
    try:
        check(seed, steps=10)
    finally:
        set_default_device(None)
