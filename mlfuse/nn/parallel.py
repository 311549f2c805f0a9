"""``torch.nn.parallel``: ``DataParallel`` runs its module on the one device
mlfuse computes on (PyTorch's single-device behaviour: no replicas, no
scatter), so ``model = nn.DataParallel(model)`` and the ``module.``-prefixed
state dicts it writes work unchanged. ``DistributedDataParallel`` needs a
process group, which mlfuse (one process) never has: it raises PyTorch's error."""

from __future__ import annotations

from mlfuse.nn.modules import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """``module`` run as it is (one device): ``nn.DataParallel(model)(x)``; its
    parameters are named ``module.*``, as PyTorch's."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a Module, got {type(module).__name__}")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        """``self.module(*inputs, **kwargs)``."""
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):  # fmt: skip
    """``module(*inputs)`` (one device), PyTorch's functional form."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))


class DistributedDataParallel(Module):
    """Needs an initialized process group (see :mod:`mlfuse.distributed`): raises."""

    def __init__(self, module: Module, *args, **kwargs):
        super().__init__()
        raise RuntimeError(
            "DistributedDataParallel: Default process group has not been initialized, please "
            "make sure to call init_process_group (mlfuse runs in one process: use the module "
            "itself, or nn.DataParallel)"
        )
