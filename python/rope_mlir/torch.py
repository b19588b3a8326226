# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch in one line: `rope_mlir.torch.compile(model, example_inputs)`.

    import rope_mlir
    fast = rope_mlir.torch.compile(model, (input_ids, position_ids))
    logits = fast(input_ids, position_ids)        # torch tensors in and out

The model (an `nn.Module`, or a function of tensors) is exported with
`torch.export` and imported to linalg-on-tensors by torch-mlir's fx importer;
`rope_mlir.jit` then runs `rope-optimize` (every rotation and attention
raised, the rotations fused into the tiled attention) and compiles the module
for this CPU. The returned callable takes the example inputs' kinds of
tensors (same shapes and dtypes: the export is static) and returns torch
tensors, exchanged without copies through DLPack, in the structure the model
returns (a tuple, a dict, a transformers `ModelOutput`).

Also a `torch.compile` backend, per graph: `torch.compile(model,
backend="rope_mlir")` (registered when this module is imported). A graph the
route cannot take (an op torch-mlir cannot import, a dynamic shape) runs as
torch's own graph, with a `RopeBackendFallbackWarning` naming why.

What it takes (README, "PyTorch in one line"): torch and torch-mlir (`pip install
rope-mlir[torch]`). The weights, buffers included, are compiled into the
module as constants: a snapshot at compile time (compile again after
changing them). Buffers the forward assigns (Phi-3's LongRoPE frequencies)
are written back to the module after each call, as eager mode would.
For transformers models, export runs with transformers' packed-sequence
detection turned off (it traces to a cumulative sum, which torch-mlir
imports as an op MLIR 22 cannot parse; eager mode finds no packed sequence
in one batch of consecutive positions either); a cumulative sum that is in
the graph anyway (torch.compile's graphs) is written out as a masked sum,
and the tanh GELU is written out (torch-mlir's has a wrong constant).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from typing import Any, Callable, Optional, Sequence

__all__ = ["compile", "RopeCompiledModel", "RopeBackendFallbackWarning",
           "BACKEND_NAME"]

#: The name `torch.compile(..., backend=...)` knows this backend by.
BACKEND_NAME = "rope_mlir"


class RopeBackendFallbackWarning(UserWarning):
    """A graph the torch.compile backend left to torch (the reason is the
    warning's message)."""


def _require(module: str, what: str):
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"rope_mlir.torch needs {what} ({module} is not importable: "
            f"{error}); install it with `pip install rope-mlir[torch]`") \
            from error


def _torch():
    return _require("torch", "PyTorch")


def _module_calling(fn, torch):
    """An nn.Module whose forward is `fn` (torch.export takes modules)."""
    class Wrapped(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)
    return Wrapped()


@contextlib.contextmanager
def _persistent_buffers(module):
    """Non-persistent buffers (transformers' `inv_freq`) made persistent
    while exporting (torch-mlir's importer finds no state for them
    otherwise), and made non-persistent again afterwards."""
    changed = []
    for sub in module.modules():
        names = list(getattr(sub, "_non_persistent_buffers_set", ()))
        for name in names:
            sub._non_persistent_buffers_set.discard(name)
            changed.append((sub, name))
    try:
        yield
    finally:
        for sub, name in changed:
            sub._non_persistent_buffers_set.add(name)


@contextlib.contextmanager
def _tensor_attributes_kept(module, torch):
    """The module's plain tensor attributes as they were before the export:
    a forward that assigns one (Phi-3's LongRoPE `long_inv_freq`) leaves the
    export's fake tensor there, which would break the caller's model."""
    saved = []
    for sub in module.modules():
        saved.append((sub, {k: v for k, v in vars(sub).items()
                            if isinstance(v, torch.Tensor)}))
    try:
        yield
    finally:
        for sub, tensors in saved:
            for key in [k for k, v in vars(sub).items()
                        if isinstance(v, torch.Tensor) and k not in tensors]:
                delattr(sub, key)
            for key, value in tensors.items():
                object.__setattr__(sub, key, value)


@contextlib.contextmanager
def _transformers_export_patches():
    """transformers' spellings that torch-mlir or MLIR 22 cannot take, for
    the export only (restored afterwards); nothing when transformers is not
    loaded."""
    import sys
    if "transformers" not in sys.modules:
        yield
        return
    try:
        from transformers import masking_utils
    except ImportError:
        yield
        return
    saved = getattr(masking_utils, "find_packed_sequence_indices", None)
    try:
        if saved is not None:
            masking_utils.find_packed_sequence_indices = \
                lambda position_ids: None
        yield
    finally:
        if saved is not None:
            masking_utils.find_packed_sequence_indices = saved


def _check_inputs(example_inputs, torch) -> tuple:
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TypeError(f"example_inputs must be a tensor or a tuple/list of "
                        f"tensors, got {type(example_inputs).__name__}")
    for i, value in enumerate(example_inputs):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"example_inputs[{i}] must be a torch.Tensor, "
                            f"got {type(value).__name__}")
        if value.device.type != "cpu":
            raise ValueError(f"example_inputs[{i}] is on {value.device}; "
                             f"rope_mlir.torch compiles for the CPU")
    return tuple(example_inputs)


def _cumsum_by_mask(x, dim, dtype=None):
    """aten.cumsum as a masked sum (torch-mlir lowers cumsum to
    `tm_tensor.scan`, which MLIR 22 cannot parse): out[i] = sum of x[j] for
    j <= i along `dim`. Quadratic in that dim's size; graphs traced through
    transformers' packed-sequence detection have it on the positions."""
    import torch
    if dtype is not None:
        x = x.to(dtype)
    elif not x.is_floating_point():
        x = x.to(torch.int64)
    moved = x.movedim(dim, -1)
    n = moved.shape[-1]
    mask = torch.ones(n, n, dtype=torch.bool, device=x.device).tril()
    zero = torch.zeros((), dtype=moved.dtype, device=x.device)
    summed = torch.where(mask, moved.unsqueeze(-2), zero).sum(-1)
    return summed.movedim(-1, dim)


def _gelu_written_out(x, approximate="none"):
    """aten.gelu written out: torch-mlir lowers the tanh approximation with
    sqrt(2/pi) as 7.977240e-01 instead of 0.7978846 (1e-5..5e-5 off the
    model's logits)."""
    import math
    import torch
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + torch.tanh(inner))
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


def _decompositions(torch):
    """Ops torch-mlir imports to what MLIR 22 cannot parse or computes
    wrongly, each with the written-out form that replaces it."""
    aten = torch.ops.aten
    return {aten.cumsum.default: _cumsum_by_mask,
            aten.gelu.default: _gelu_written_out}


def _export(module, inputs, torch):
    """(MLIR text, output tree spec, buffer names the forward assigns, in
    the order their new values lead the results)."""
    fx = _require("torch_mlir.fx", "torch-mlir")
    from torch_mlir.compiler_utils import OutputType
    from torch.export.graph_signature import OutputKind
    with _persistent_buffers(module), _tensor_attributes_kept(module, torch), \
            _transformers_export_patches():
        program = torch.export.export(module, inputs)
    targets = {node.target for node in program.graph_module.graph.nodes}
    used = {op: fn for op, fn in _decompositions(torch).items()
            if op in targets}
    if used:
        program = program.run_decompositions(used)
    try:
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table
        decomposed = program.run_decompositions(get_decomposition_table())
        mutated = [spec.target for spec in
                   decomposed.graph_signature.output_specs
                   if spec.kind == OutputKind.BUFFER_MUTATION]
    except ImportError:
        mutated = [spec.target for spec in program.graph_signature.output_specs
                   if spec.kind == OutputKind.BUFFER_MUTATION]
    imported = fx.export_and_import(
        program, output_type=OutputType.LINALG_ON_TENSORS, func_name="main")
    return str(imported), program.call_spec.out_spec, mutated


class RopeCompiledModel:
    """A model compiled by `rope_mlir.torch.compile`: call it like the
    model. `mlir` is the imported linalg module (before rope-optimize);
    `raised()` counts the rotations and attentions rope-optimize raised."""

    def __init__(self, module, text: str, out_spec, mutated: Sequence[str],
                 inputs: tuple, function):
        self._module = module
        self.mlir = text
        self._out_spec = out_spec
        self._mutated = list(mutated)
        self._function = function
        self._signature = [(tuple(t.shape), t.dtype) for t in inputs]

    def raised(self) -> dict:
        """{"rotations": n, "attentions": m}: `rope.apply` and
        `rope.attention` ops after `--rope-raise` on the imported module."""
        from . import _jit
        text = _jit.lower(self.mlir, "builtin.module(rope-raise)")
        return {"rotations": text.count("rope.apply ins("),
                "attentions": text.count("rope.attention ins(")}

    def __call__(self, *args):
        torch = _torch()
        if len(args) != len(self._signature):
            raise TypeError(f"the compiled model takes {len(self._signature)}"
                            f" tensors (its example inputs), got {len(args)}")
        call = []
        for i, (value, (shape, dtype)) in enumerate(zip(args,
                                                        self._signature)):
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"argument {i} must be a torch.Tensor, got "
                                f"{type(value).__name__}")
            if tuple(value.shape) != shape or value.dtype != dtype:
                raise ValueError(
                    f"argument {i} is {tuple(value.shape)} {value.dtype}; "
                    f"the model was compiled for {shape} {dtype} (compile "
                    f"again for other shapes)")
            if value.device.type != "cpu":
                raise ValueError(f"argument {i} is on {value.device}; the "
                                 f"compiled model runs on the CPU")
            call.append(value.detach() if value.requires_grad else value)
        results = self._function(*call)
        if not isinstance(results, tuple):
            results = (results,)
        results = [r if isinstance(r, torch.Tensor) else torch.as_tensor(r)
                   for r in results]
        if self._mutated:
            updates, results = (results[:len(self._mutated)],
                                results[len(self._mutated):])
            for name, value in zip(self._mutated, updates):
                with torch.no_grad():
                    self._module.get_buffer(name).copy_(value)
        from torch.utils import _pytree
        return _pytree.tree_unflatten(list(results), self._out_spec)


def compile(model_or_fn: Any, example_inputs: Any, *,
            checked: bool = False) -> RopeCompiledModel:
    """Exports `model_or_fn` (an nn.Module or a function of tensors) on
    `example_inputs` (a tensor or a tuple of CPU tensors), raises and fuses
    every rotation and attention (rope-optimize) and compiles it for this
    CPU. Returns a callable taking tensors of the same shapes and dtypes.
    `checked=True` compiles rope_mlir.jit's runtime checks of indices (a
    gather by token id outside the table raises CheckError instead of
    reading outside it)."""
    torch = _torch()
    _require("torch_mlir", "torch-mlir")
    inputs = _check_inputs(example_inputs, torch)
    if isinstance(model_or_fn, torch.nn.Module):
        module = model_or_fn
    elif callable(model_or_fn):
        module = _module_calling(model_or_fn, torch)
    else:
        raise TypeError(f"model_or_fn must be a torch.nn.Module or a "
                        f"callable, got {type(model_or_fn).__name__}")
    text, out_spec, mutated = _export(module, inputs, torch)
    from .compiled import jit
    function = jit(text, checked=checked).function("main")
    return RopeCompiledModel(module, text, out_spec, mutated, inputs, function)


def _backend(graph_module, example_inputs):
    """torch.compile's backend: each graph compiled by `compile`, or left to
    torch with a warning saying why."""
    torch = _torch()
    try:
        if any(not isinstance(t, torch.Tensor) for t in example_inputs):
            raise TypeError("a graph input is not a tensor (a symbolic size: "
                            "compile with dynamic=False)")
        compiled = compile(graph_module, tuple(example_inputs))
    except Exception as error:  # any failure: torch runs the graph itself
        warnings.warn(f"rope_mlir backend: graph left to torch: "
                      f"{type(error).__name__}: {error}",
                      RopeBackendFallbackWarning, stacklevel=2)
        return graph_module.forward
    return compiled


def register_backend() -> bool:
    """Registers the torch.compile backend `rope_mlir` (idempotent). False
    when this torch has no backend registry."""
    torch = _torch()
    try:
        from torch._dynamo import list_backends, register_backend as register
    except ImportError:
        return False
    if BACKEND_NAME not in list_backends(exclude_tags=()):
        register(compiler_fn=_backend, name=BACKEND_NAME)
    return True


try:  # registering needs torch; importing this module does not
    import importlib.util as _util
    if _util.find_spec("torch") is not None:
        register_backend()
except Exception:  # a broken torch install: compile() says why when called
    pass
