//===- Passes.td - Generic CPU codegen passes --------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Passes of the CPU backend that know nothing of the rope dialect: they work
// on upstream linalg/vector/memref IR (and on any op through upstream
// interfaces), so the rope dialect, its conversions and transforms never
// depend on them; only the pipelines do (docs/DESIGN.md, the layer table).
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_CODEGEN_CPU_PASSES_TD
#define ROPE_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def RopeDecomposeAggregatesPass : Pass<"rope-decompose-aggregates"> {
  let summary = "Decompose aggregated ops (linalg.softmax, rope.attention, "
                "rope.online_attention) into structured ops";
  let description = [{
    Replaces every op implementing upstream's `AggregatedOpInterface`
    (`linalg.softmax`, `rope.attention`, `rope.online_attention`) by its
    decomposition into `linalg.generic`/`linalg.fill`, repeatedly until none is
    left.

    ```mlir
    %p = linalg.softmax dimension(1) ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes a max reduction, exp(x - max), a sum reduction and a division
    ```

    Contract: docs/PASSES.md, `rope-decompose-aggregates`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect"
  ];
}

def RopeVectorizeContractionsPass : Pass<"rope-vectorize-contractions"> {
  let summary = "Lower linalg contractions on buffers to register-tiled "
                "vector FMAs";
  let description = [{
    Rewrites mul-add contractions on buffers (matmul, batch_matmul, generic
    contractions with one reduction dim whose payload is exactly acc + a·b,
    inputs at most extended from bf16/f16; f32/f64 accumulators) into scf
    loops over register tiles of vector FMAs: an outer-product, a dot, or a
    packed outer-product micro-kernel (the dot-shaped operand transposed
    once), chosen by which dim has unit stride, with output columns in
    blocks sized for L1 (`slab-bytes`).

    ```mlir
    linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>)
                  outs(%c : memref<64x64xf32>)
    // becomes
    scf.for %i = %c0 to %c64 step %c4 {
      scf.for %j = %c0 to %c64 step %c32 {
        %c00 = vector.load %c[%i, %j] : memref<64x64xf32>, vector<16xf32>
        ...
        %acc:8 = scf.for %k = %c0 to %c32 step %c1 iter_args(...) {
          %b0 = vector.load %b[%k, %j] : memref<32x64xf32>, vector<16xf32>
          %a0 = memref.load %a[%i, %k] : memref<64x32xf32>
          %s0 = vector.broadcast %a0 : f32 to vector<16xf32>
          %f00 = vector.fma %s0, %b0, %acc00 : vector<16xf32>
          ...
        }
        vector.store %acc#0, %c[%i, %j] : memref<64x64xf32>, vector<16xf32>
        ...
    ```

    Contract: docs/PASSES.md, `rope-vectorize-contractions`.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Bits of one vector (512: AVX-512; 256: AVX2)">,
    Option<"rows", "rows", "int64_t", /*default=*/"4",
           "Rows of a register tile">,
    Option<"vectorsPerRow", "vectors-per-row", "int64_t", /*default=*/"2",
           "Vectors per row of an outer-product tile">,
    Option<"columns", "columns", "int64_t", /*default=*/"4",
           "Output columns of a dot tile">,
    Option<"slabBytes", "slab-bytes", "int64_t", /*default=*/"16384",
           "Bytes of the vector operand's slab for one block of output "
           "columns, read by every row tile before the next block (0: no "
           "blocking)">,
    Option<"bf16Products", "bf16-products", "::mlir::rope::BFloat16Products",
           /*default=*/"::mlir::rope::BFloat16Products::Fma",
           "How bf16 x bf16 -> f32 contractions multiply",
           [{::llvm::cl::values(
             clEnumValN(::mlir::rope::BFloat16Products::Fma, "fma",
                        "inputs widened to f32, f32 FMAs (any target)"),
             clEnumValN(::mlir::rope::BFloat16Products::Avx512Dot,
                        "avx512-dot",
                        "AVX512-BF16 vdpbf16ps: pairs of products per lane "
                        "(subnormals flushed to zero)"),
             clEnumValN(::mlir::rope::BFloat16Products::Amx, "amx",
                        "AMX tdpbf16ps tiles where a packed outer product "
                        "has whole 16x16 tiles (Q·Kᵀ; P·V with f32 P split "
                        "into three exact bf16 parts), vdpbf16ps elsewhere"))}]>,
    Option<"prefetchRows", "prefetch-rows", "int64_t", /*default=*/"0",
           "Where one row tile holds every row (a decode step), prefetch "
           "the streamed operand's rows this many ahead into L2, clamped to "
           "its buffer (0: none)">,
    Option<"rowAccumulators", "row-accumulators", "int64_t", /*default=*/"0",
           "Where one row tile holds every row (a decode step), the "
           "accumulator registers an outer-product tile may use to cover "
           "whole output rows (0: from vector-bits)">
  ];
  let dependentDialects = [
    "::mlir::amx::AMXDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect"
  ];
}

def RopeEmulateBF16ProductsPass : Pass<"rope-emulate-bf16-products"> {
  let summary = "Rewrite AMX tiles and AVX512-BF16 pair dot products into "
                "portable vector ops";
  let description = [{
    The code `rope-vectorize-contractions` generates for `bf16-products=amx`
    or `avx512-dot` runs only where the CPU has those units. This rewrites
    their ops into plain vector ops that compute the same products in the
    same order, so that the tiling, the packing and the indexing around them
    are run and checked against float64 on any CPU:

    - `amx.tile_load` / `amx.tile_store` of a 2-D buffer (the views
      `rope-vectorize-contractions` creates): 16 row loads or stores;
      `amx.tile_zero`: a zero vector;
    - `amx.tile_mulf` (tdpbf16ps): for each row and each pair k of the
      reduction, out[n] += a[2k]·b[k][2n], then += a[2k+1]·b[k][2n+1], as
      f32 FMAs of the exact bf16 products;
    - `x86vector.avx512.dot` (vdpbf16ps): each lane adds the odd product,
      then the even one.

    Rounding is the instructions' (round to nearest even, once per
    addition); their flushing of subnormal inputs and results to zero is
    not reproduced. A tile load with an explicit stride operand is left
    alone (`rope-vectorize-contractions` creates none) and reported.

    ```mlir
    %c = amx.tile_mulf %a, %b, %acc
        : !amx.tile<16x32xbf16>, !amx.tile<16x32xbf16>, !amx.tile<16x16xf32>
    // becomes, per row m of 16 and pair k of 16:
    %row = vector.fma %a_m_2k, %b_k_even, %row : vector<16xf32>
    %row2 = vector.fma %a_m_2k1, %b_k_odd, %row : vector<16xf32>
    ```

    Contract: docs/PASSES.md, `rope-emulate-bf16-products`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeVectorizeElementwisePass : Pass<"rope-vectorize-elementwise"> {
  let summary = "Vectorize elementwise and row-reduction linalg ops on "
                "buffers row by row";
  let description = [{
    Vectorizes linalg ops on buffers whose innermost loop has a static
    extent (the others may be dynamic) that are not contractions and
    reduce, if at all, over the innermost loop (the online softmax's row
    steps): one row at a time with upstream `linalg::vectorize`,
    lowered to 1-D vectors, f32 `math.exp` as a polynomial.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%s : memref<32x64xf32>) outs(%max : memref<32xf32>) { arith.maximumf ... }
    // becomes
    scf.for %i = %c0 to %c32 step %c1 {
      %row = vector.load %s[%i, %c0] : memref<32x64xf32>, vector<64xf32>
      %m = vector.reduction <maximumf>, %row ... : vector<64xf32> into f32
      ...
    }
    ```

    Contract: docs/PASSES.md, `rope-vectorize-elementwise`.
  }];
  let options = [
    Option<"maxLanes", "max-lanes", "int64_t", /*default=*/"256",
           "Longest row vectorized whole">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RopeFoldConstantTransposesPass : Pass<"rope-fold-constant-transposes"> {
  let summary = "Transpose constant tensors at compile time";
  let description = [{
    Replaces a `linalg.transpose` of a constant (dense or a loaded
    `dense_resource` blob) by the transposed constant, so that a frontend's x·Wᵀ
    does not copy every weight matrix on every call.

    ```mlir
    %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %t = linalg.transpose ins(%w : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) permutation = [1, 0]
    // becomes
    %t = arith.constant dense<[[1.0, 3.0], [2.0, 4.0]]> : tensor<2x2xf32>
    ```

    Contract: docs/PASSES.md, `rope-fold-constant-transposes`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def RopeFoldUnitDimCopiesPass : Pass<"rope-fold-unit-dim-copies"> {
  let summary = "Copies that only drop unit dims as tensor.collapse_shape";
  let description = [{
    A `linalg.generic` copy that only drops unit dims of its input becomes
    a `tensor.collapse_shape` (a view once bufferized).

    ```mlir
    %c = linalg.generic {indexing_maps = [
           affine_map<(d0, d1, d2) -> (0, d0, d1, d2)>,
           affine_map<(d0, d1, d2) -> (d0, d1, d2)>], ...}
         ins(%q : tensor<1x32x1024x128xf32>)
         outs(%e : tensor<32x1024x128xf32>) { ... linalg.yield %in : f32 }
    // becomes
    %c = tensor.collapse_shape %q [[0, 1], [2], [3]]
         : tensor<1x32x1024x128xf32> into tensor<32x1024x128xf32>
    ```

    Contract: docs/PASSES.md, `rope-fold-unit-dim-copies`.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def RopeKeepVectorLoopsPass : Pass<"rope-keep-vector-loops"> {
  let summary = "Keep loops of vector code as loops: mark them not to be "
                "unrolled by LLVM";
  let description = [{
    Marks every `scf.for` computing on vectors `unroll<disable = true>`, so that
    LLVM does not fully unroll the pipeline's own register tiles and vector rows
    (seconds of code generation in a whole model, no run-time gain).

    ```mlir
    scf.for %i = %c0 to %c16 step %c1 {
      %v = vector.load %m[%i, %c0] : memref<16x64xf32>, vector<16xf32>
      ...
    } {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>}
    ```

    Contract: docs/PASSES.md, `rope-keep-vector-loops`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def RopeOutlineChunksPass
    : Pass<"rope-outline-chunks", "::mlir::ModuleOp"> {
  let summary = "Cut a large function body into consecutive outlined chunks, "
                "so that LLVM optimizes functions of bounded size";
  let description = [{
    Cuts the body of every single-block `func.func` with more than `max-ops`
    operations into consecutive chunks of about `max-ops`, each moved into a
    private `noinline` function called in order, so that LLVM optimizes
    functions of bounded size.

    ```mlir
    func.func @steps(%x: memref<4xf32>) -> memref<4xf32> { ... }   // > max-ops ops
    // becomes
    func.func @steps(%x: memref<4xf32>) -> memref<4xf32> {
      %a = call @steps__chunk0(%x) : (memref<4xf32>) -> memref<4xf32>
      %b = call @steps__chunk1(%a) : (memref<4xf32>) -> memref<4xf32>
      ...
    }
    func.func private @steps__chunk0(%x: memref<4xf32>) -> memref<4xf32>
        attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]} { ... }
    ```

    Contract: docs/PASSES.md, `rope-outline-chunks`.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"2000",
           "Bodies with more operations (nested ones included) than this "
           "are cut into chunks of about this many; 0 disables the pass">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def RopeOutlineRepeatsPass
    : Pass<"rope-outline-repeats", "::mlir::ModuleOp"> {
  let summary = "Outline a function body's repeated stretch of ops (a "
                "model's layers) into one function called once per repeat";
  let description = [{
    Finds the longest stretch of top-level ops in a function body that repeats
    with some period (a model's layers), checks every repeat against the first
    op for op, and outlines it into one private `noinline` function called once
    per repeat.

    ```mlir
    // one layer's ops on @w1, the same ops on @w2, on @w3, ...
    // becomes
    %w1 = memref.get_global @w1 : memref<4xf32>
    %a1 = call @layers__repeat(%a0, %w1) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
    %w2 = memref.get_global @w2 : memref<4xf32>
    %a2 = call @layers__repeat(%a1, %w2) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
    ...
    ```

    Contract: docs/PASSES.md, `rope-outline-repeats`.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"64",
           "Repeats of fewer operations (nested ones included) than this "
           "are left inline">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def RopeExpandBFloat16Pass : Pass<"rope-expand-bf16"> {
  let summary = "bf16 conversions as integer arithmetic on their bits";
  let description = [{
    Rewrites bf16 conversions (`arith.truncf` to bf16, `arith.extf` from bf16)
    as integer arithmetic on their bits, and bf16 vector loads and stores as i16
    ones, so that x86 without AVX512-BF16 does not call `__truncsfbf2` per
    element; `truncation=target` leaves the rounding to the target.

    ```mlir
    %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
    // becomes
    %bits = arith.bitcast %x : vector<16xf32> to vector<16xi32>
    // + 0x7fff + the lowest kept bit (round to nearest even), the quiet NaN
    // selected on i32, shifted down by 16 and truncated to i16
    %h = arith.bitcast %r : vector<16xi16> to vector<16xbf16>
    ```

    Contract: docs/PASSES.md, `rope-expand-bf16`.
  }];
  let options = [
    Option<"truncation", "truncation", "::mlir::rope::BFloat16Truncation",
           /*default=*/"::mlir::rope::BFloat16Truncation::Bits",
           "How arith.truncf f32 -> bf16 is lowered",
           [{::llvm::cl::values(
             clEnumValN(::mlir::rope::BFloat16Truncation::Bits, "bits",
                        "integer arithmetic on the bits (any target; "
                        "subnormal results kept)"),
             clEnumValN(::mlir::rope::BFloat16Truncation::Target, "target",
                        "left to the target's conversion (AVX512-BF16: "
                        "subnormal results flushed to zero)"))}]>
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def RopePrefetchStridedRowsPass : Pass<"rope-prefetch-strided-rows"> {
  let summary = "Software prefetch for vector loops over rows that are "
                "apart in memory";
  let description = [{
    Inserts software prefetches (into L2, `distance` rows ahead, clamped to the
    buffer) into `scf.for` loops that read or write vector rows of a memref
    whose rows are apart in memory, which the hardware prefetchers do not
    follow, and that read contiguous rows of a view made of several runs of
    them apart (a key tile of every head of K, read a few heads at a time).

    ```mlir
    scf.for %r = %c0 to %n step %c1 {
      %v = vector.load %rows[%r, %c0] : memref<?x64xbf16, strided<[192, 1]>>, vector<32xbf16>
      ...
    }
    // becomes
    scf.for %r = %c0 to %n step %c1 {
      memref.prefetch %flat[%ahead], read, locality<2>, data : memref<?xbf16>   // row %r + 16, clamped
      %v = vector.load %rows[%r, %c0] : memref<?x64xbf16, strided<[192, 1]>>, vector<32xbf16>
      ...
    }
    ```

    Contract: docs/PASSES.md, `rope-prefetch-strided-rows`.
  }];
  let options = [
    Option<"distance", "distance", "int64_t", /*default=*/"16",
           "Rows ahead to prefetch (0: none)">,
    Option<"lineBytes", "line-bytes", "int64_t", /*default=*/"64",
           "Cache line size in bytes">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def RopeCheckAllocationSizesPass : Pass<"rope-check-allocation-sizes"> {
  let summary = "Check at run time that each dynamic allocation's byte size "
                "is non-negative and fits in 64 bits";
  let description = [{
    Inserts before every dynamic `memref.alloc` a run-time check that the sizes
    are non-negative and the byte count fits in int64 (a `cf.assert` marked
    `rope.trap = "out-of-memory"`).

    ```mlir
    %b = memref.alloc(%n) : memref<?xf32>
    // becomes: cf.assert (%n >= 0 && %n <= INT64_MAX / 4), "...";
    //          %b = memref.alloc(%n) : memref<?xf32>
    ```

    Contract: docs/PASSES.md, `rope-check-allocation-sizes`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

def RopeLowerAssertsToTrapsPass : Pass<"rope-lower-asserts-to-traps"> {
  let summary = "Lower cf.assert to a call of the rope runtime's trap";
  let description = [{
    Lowers every `cf.assert` to a branch into a call of the rope runtime's
    `ropeRuntimeTrap(kind, message)`, which returns to the guarded call in a
    host process (raised as a Python exception) instead of aborting it.

    ```mlir
    cf.assert %ok, "index out of bounds"
    // becomes
    cf.cond_br %ok, ^next, ^fail
    ^fail:
      %message = llvm.mlir.addressof @rope_trap_message_0 : !llvm.ptr
      %kind = llvm.mlir.constant(2 : i32) : i32
      llvm.call @ropeRuntimeTrap(%kind, %message) : (i32, !llvm.ptr) -> ()
      llvm.unreachable
    ```

    Contract: docs/PASSES.md, `rope-lower-asserts-to-traps`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // ROPE_CODEGEN_CPU_PASSES_TD
