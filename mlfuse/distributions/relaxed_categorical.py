"""PyTorch's ``torch.distributions.relaxed_categorical`` module, for code that imports
from it: ExpRelaxedCategorical, RelaxedOneHotCategorical (defined in
:mod:`mlfuse.distributions.transformed_distribution`)."""

from mlfuse.distributions.transformed_distribution import (
    ExpRelaxedCategorical,
    RelaxedOneHotCategorical,
)

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
