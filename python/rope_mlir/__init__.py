# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir: Rotary Position Embedding compiled by rope-mlir (MLIR).

    import numpy as np, rope_mlir
    q = np.random.rand(2, 16, 32, 128).astype(np.float32)   # [B, S, H, D]
    pos = np.arange(16)[None].repeat(2, 0)                    # [B, S]
    y = rope_mlir.apply(q, pos, base=500000.0)

`apply` compiles (once per configuration, in process) and runs `rope.apply`;
`compile` returns the reusable kernel; `emit` returns its IR. The float64
reference of the semantics is `rope_mlir.reference`. `from_hf_config` reads
a Hugging Face config.json into a `RopeSpec` (scaling, M-RoPE, partial
rotary) whose `.apply` runs it. `append_kv` rotates K into a KV cache (and
writes V beside it) in place. `jit` compiles any module of tensor
functions (rope.apply, linalg, frontend IR) and calls them on numpy arrays.
"""

from ._jit import CheckError, CompileError
from .cache import AppendKernel, append_kv, compile_append
from .compiled import (CompiledFunction, CompiledModule,
                       FunctionNotFoundError, jit)
from .fused import apply_qk, compile_qk
from .hf import (RopeSpec, UnknownModelTypeWarning,
                 UnsupportedModelTypeError, from_hf_config, rope_layers)
from .kernel import (Kernel, KernelConfig, apply, cache_info, compile,
                     dtype_name, scaling_attributes)
from .kernel import emit as _emit_config
from .mla import apply_mla

__all__ = ["apply", "apply_qk", "compile_qk", "append_kv", "compile_append",
           "apply_mla",
           "AppendKernel", "compile", "emit", "Kernel",
           "KernelConfig", "CompileError", "CheckError", "cache_info", "dtype_name",
           "from_hf_config", "rope_layers", "RopeSpec",
           "UnknownModelTypeWarning", "UnsupportedModelTypeError",
           "scaling_attributes", "jit", "CompiledModule", "CompiledFunction",
           "FunctionNotFoundError"]
__version__ = "0.1.0"


def emit(config=None, **kwargs) -> str:
    """The `rope.apply` IR (a func with a C interface) for a configuration,
    given as a KernelConfig or as its fields."""
    import dataclasses
    if config is None:
        config = KernelConfig(**kwargs)
    elif kwargs:
        config = dataclasses.replace(config, **kwargs)
    return _emit_config(config)


def __getattr__(name):
    # `rope_mlir.torch` (PyTorch in one line) is imported on first use, so
    # `import rope_mlir` neither needs nor loads torch.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
