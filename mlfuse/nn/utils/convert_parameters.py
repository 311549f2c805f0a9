"""``torch.nn.utils.convert_parameters``'s names (defined in :mod:`mlfuse.nn.utils`)."""

from mlfuse.nn.utils import parameters_to_vector, vector_to_parameters

__all__ = ["parameters_to_vector", "vector_to_parameters"]
