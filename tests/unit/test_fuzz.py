"""Random tensor programs (tests/unit/fuzz_programs.py) against a float64
numpy model: a fixed set of seeds, and the seeds that once failed.

For a long run: ``python tests/unit/fuzz_programs.py --cases 2000 --steps 16``.
"""

from __future__ import annotations

import pytest

from fuzz_programs import check

# programs that once failed, with their step counts: a scan over a dim that its
# input's view splits (group-reduces could form no kernel)
REGRESSIONS = [(10105, 16)]


@pytest.mark.parametrize("seed", range(24))
def test_random_programs_agree_with_numpy(seed):
    check(seed, steps=10)


@pytest.mark.parametrize("seed, steps", REGRESSIONS)
def test_programs_that_once_failed(seed, steps):
    check(seed, steps)
