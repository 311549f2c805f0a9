"""``mlfuse.nn``: neural-network building blocks. ``mlfuse.nn.functional``
holds the functions with ``torch.nn.functional``'s names (``F.conv2d``,
``F.cross_entropy``, ``F.scaled_dot_product_attention``...); the small
modules (``nn.Linear``, ``nn.Conv2d``, ``nn.Sequential``...) hold Tensor
parameters and call them. ``nn.init`` fills tensors in place (PyTorch's
initialisers), ``nn.utils`` clips gradients, pads sequences, parametrizes
tensors (weight norm, spectral norm, orthogonal) and folds batch norms into
layers, and ``nn.state`` is tinygrad's: state dicts of any object, safetensors files.
``nn.optim`` is ``mlfuse.optim`` (tinygrad's ``nn.optim.SGD`` spelling)."""

from mlfuse.nn import common_types, functional, grad, init, parallel, parameter, state, utils
from mlfuse.nn.modules import *  # noqa: F403 - the modules are the package's names
from mlfuse.nn.modules import __all__ as _modules
from mlfuse.nn.recurrent import *  # noqa: F403 - RNN, LSTM, GRU and their cells
from mlfuse.nn.recurrent import __all__ as _recurrent
from mlfuse.nn.attention import *  # noqa: F403 - attention and transformer layers
from mlfuse.nn.attention import __all__ as _attention

from mlfuse.nn.parallel import DataParallel  # noqa: E402

__all__ = [
    "functional", "init", "state", "utils", "parameter", "parallel", "grad", "common_types",
    "DataParallel", *_modules, *_recurrent, *_attention,
]  # fmt: skip


def __getattr__(name: str):
    if name == "optim":  # tinygrad's spelling; imported on first use (optim imports nn)
        import mlfuse.optim

        return mlfuse.optim
    raise AttributeError(f"module 'mlfuse.nn' has no attribute {name!r}")
