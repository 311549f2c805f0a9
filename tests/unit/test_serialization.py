"""mlfuse.save / mlfuse.load and the weights_only allowlist (mlfuse.serialization)."""

import collections
import dataclasses
import io
import pickle

import numpy as np
import pytest

import mlfuse
from mlfuse import serialization


@dataclasses.dataclass
class Config:
    width: int = 4


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    mlfuse.save(obj, buf)
    buf.seek(0)
    return buf


def test_checkpoints_of_tensors_and_states_load_weights_only():
    model = mlfuse.nn.Linear(3, 2)
    opt = mlfuse.optim.Adam(model.parameters())
    model(mlfuse.ones(1, 3)).sum().backward()
    opt.step()
    ckpt = {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "bf16": mlfuse.ones(2, dtype=mlfuse.bfloat16),
        "z": mlfuse.tensor([1 + 2j]),
        "meta": collections.OrderedDict(step=3, lr=[1e-3], name="run"),
    }
    back = mlfuse.load(_saved(ckpt))
    assert isinstance(back["model"], collections.OrderedDict)
    np.testing.assert_array_equal(back["model"]["weight"].numpy(), model.weight.numpy())
    assert back["bf16"].dtype == mlfuse.bfloat16 and back["z"].tolist() == [1 + 2j]
    assert back["meta"] == {"step": 3, "lr": [1e-3], "name": "run"}
    opt.load_state_dict(back["opt"])


def test_other_globals_are_refused_unless_allowed():
    buf = _saved({"cfg": Config(8)})
    with pytest.raises(pickle.UnpicklingError, match=r"needs test_serialization\.Config"):
        mlfuse.load(buf)
    buf.seek(0)
    assert serialization.get_unsafe_globals_in_checkpoint(buf) == ["test_serialization.Config"]
    buf.seek(0)
    with serialization.safe_globals([Config]):
        assert mlfuse.load(buf)["cfg"] == Config(8)
    assert serialization.get_safe_globals() == []
    buf.seek(0)
    assert mlfuse.load(buf, weights_only=False)["cfg"] == Config(8)
    serialization.add_safe_globals([Config])
    try:
        buf.seek(0)
        assert mlfuse.load(buf)["cfg"].width == 8
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(TypeError, match="expects a list"):
        serialization.add_safe_globals(Config)


def test_pytorch_module_paths():
    from mlfuse.nn.utils.clip_grad import clip_grad_norm_
    from mlfuse.nn.utils.convert_parameters import parameters_to_vector
    from mlfuse.utils.data.dataloader import DataLoader
    from mlfuse.utils.data.sampler import SubsetRandomSampler

    assert clip_grad_norm_ is mlfuse.nn.utils.clip_grad_norm_
    assert parameters_to_vector is mlfuse.nn.utils.parameters_to_vector
    assert DataLoader is mlfuse.utils.data.DataLoader
    assert sorted(SubsetRandomSampler([3, 1, 2])) == [1, 2, 3]
