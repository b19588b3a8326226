//===- Pipelines.h - Named rope-mlir pipelines ------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_PIPELINES_PIPELINES_H
#define ROPE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"

namespace mlir {
class OpPassManager;
namespace rope {

/// Options of the `rope-to-llvm-cpu` pipeline.
struct RopeToLLVMCpuPipelineOptions
    : public PassPipelineOptions<RopeToLLVMCpuPipelineOptions> {
  PassOptions::Option<bool> bufferizeFunctionBoundaries{
      *this, "bufferize-function-boundaries",
      llvm::cl::desc("Bufferize function signatures (tensor arguments become "
                     "memrefs with identity layout)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers for every function (for "
                     "native callers and the Python package)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Lower rope.apply with convert-rope-to-vector (vector "
                     "code, token-parallel loop; the default) instead of "
                     "the scalar linalg loops (for debugging)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeContractions{
      *this, "vectorize-contractions",
      llvm::cl::desc("Lower linalg contractions on f32/f64 buffers (matmul, "
                     "batch_matmul, generic contractions such as attention "
                     "scores and P·V) to register-tiled vector FMAs with "
                     "rope-vectorize-contractions instead of scalar loops"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> numThreads{
      *this, "num-threads",
      llvm::cl::desc("Threads for the token loop: 1 (default) runs it "
                     "sequentially, N > 1 maps it to an OpenMP parallel loop "
                     "with N threads, 0 lets the OpenMP runtime choose (all "
                     "cores); the program then needs libomp"),
      llvm::cl::init(1)};
  PassOptions::Option<int64_t> vectorBytes{
      *this, "vector-bytes",
      llvm::cl::desc("convert-rope-to-vector's vector-bytes: the bytes of "
                     "x's element type per vector chunk of a row (32: 8 f32 "
                     "lanes, 16 bf16; 0: one cache line of the compute type)"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> contractionVectorBits{
      *this, "contraction-vector-bits",
      llvm::cl::desc("rope-vectorize-contractions' vector-bits: the bits of "
                     "one vector of a register tile (256: AVX2, whose 16 "
                     "registers hold the 4x2-vector tile's accumulators; "
                     "512: AVX-512)"),
      llvm::cl::init(256)};
  PassOptions::Option<int64_t> contractionRows{
      *this, "contraction-rows",
      llvm::cl::desc("rope-vectorize-contractions' rows: the rows of a "
                     "register tile (0: chosen from contraction-vector-bits)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionVectorsPerRow{
      *this, "contraction-vectors-per-row",
      llvm::cl::desc("rope-vectorize-contractions' vectors-per-row: the "
                     "vectors per row of an outer-product tile (0: chosen "
                     "from contraction-vector-bits)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionColumns{
      *this, "contraction-columns",
      llvm::cl::desc("rope-vectorize-contractions' columns: the output "
                     "columns of a dot tile (0: chosen from "
                     "contraction-vector-bits)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionSlabBytes{
      *this, "contraction-slab-bytes",
      llvm::cl::desc("rope-vectorize-contractions' slab-bytes: the bytes of "
                     "the vector operand read by every row tile of a block "
                     "of output columns (sized for the L1 data cache; 0: "
                     "no blocking)"),
      llvm::cl::init(16384)};
  PassOptions::Option<BFloat16Products> contractionBF16Products{
      *this, "contraction-bf16-products",
      llvm::cl::desc("rope-vectorize-contractions' bf16-products: how bf16 x "
                     "bf16 -> f32 contractions multiply: `fma`, inputs "
                     "widened to f32 (any target, the default), or "
                     "`avx512-dot`, AVX512-BF16's vdpbf16ps (the target "
                     "must have avx512bf16; subnormals flushed to zero), or "
                     "`amx`, AMX tdpbf16ps tiles where whole tiles fit and "
                     "vdpbf16ps elsewhere (the target must have amx-tile, "
                     "amx-bf16 and avx512bf16, and the process the AMX tile "
                     "state)"),
      llvm::cl::init(BFloat16Products::Fma),
      llvm::cl::values(
          clEnumValN(BFloat16Products::Fma, "fma", "inputs widened, f32 FMAs"),
          clEnumValN(BFloat16Products::Avx512Dot, "avx512-dot",
                     "AVX512-BF16 vdpbf16ps"),
          clEnumValN(BFloat16Products::Amx, "amx",
                     "AMX tdpbf16ps tiles, vdpbf16ps elsewhere"))};
  PassOptions::Option<bool> emulateBF16Products{
      *this, "emulate-bf16-products",
      llvm::cl::desc("Rewrite the AMX tiles and vdpbf16ps products of "
                     "contraction-bf16-products=amx/avx512-dot into portable "
                     "vector ops computing the same products in the same "
                     "order (rope-emulate-bf16-products): the generated "
                     "tiling runs, and is tested, on CPUs without those "
                     "units"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> contractionPrefetchRows{
      *this, "contraction-prefetch-rows",
      llvm::cl::desc("rope-vectorize-contractions' prefetch-rows: where one "
                     "row tile holds every row (a decode step's query "
                     "group), the rows of the streamed operand (K, V) this "
                     "many ahead are prefetched into L2; 0: none"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> contractionRowAccumulators{
      *this, "contraction-row-accumulators",
      llvm::cl::desc("rope-vectorize-contractions' row-accumulators: where "
                     "one row tile holds every row, the accumulator "
                     "registers an outer-product tile may use to cover "
                     "whole output rows (0: from contraction-vector-bits)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> rotateKeysInScores{
      *this, "rotate-keys-in-scores",
      llvm::cl::desc("rope-rotate-keys-in-scores: keys rotated by rope.apply "
                     "inside the key loop (a decode step over a cache of "
                     "un-rotated keys) are rotated in the Q·Kᵀ register "
                     "tiles instead of stored rotated (with vectorize and "
                     "vectorize-contractions)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> elementwiseMaxLanes{
      *this, "elementwise-max-lanes",
      llvm::cl::desc("rope-vectorize-elementwise's max-lanes: the longest "
                     "vector of an elementwise or row-reduction op; longer "
                     "rows are loops over vectors of this many lanes (16: "
                     "two AVX2 registers of f32; wider vectors are split by "
                     "the code generator and spilled)"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> tileHeads{
      *this, "tile-heads",
      llvm::cl::desc("convert-rope-to-vector's tile-heads: heads rotated at "
                     "once by the tiled form of [B, H, S, D] (>= 1)"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> tileTokens{
      *this, "tile-tokens",
      llvm::cl::desc("convert-rope-to-vector's tile-tokens: tokens per tile "
                     "of the tiled form of [B, H, S, D] (0: automatic)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> prefetchRows{
      *this, "prefetch-rows",
      llvm::cl::desc("rope-prefetch-strided-rows' distance: rows ahead that "
                     "vector loops over rows apart in memory (MLA's rope "
                     "slice of q) or over runs of rows apart (a key tile of "
                     "every head) prefetch; 0: none"),
      llvm::cl::init(16)};
  PassOptions::Option<AngleMethod> angle{
      *this, "angle",
      llvm::cl::desc("How rope.apply forms the angle position * theta "
                     "(convert-rope-to-vector / -linalg's angle=): `f64` "
                     "(the default) or `turns` (i64 phase steps and f32 "
                     "only)"),
      llvm::cl::init(AngleMethod::F64),
      llvm::cl::values(
          clEnumValN(AngleMethod::F64, "f64", "in f64"),
          clEnumValN(AngleMethod::Turns, "turns", "i64 phase steps and f32"))};
  PassOptions::Option<BFloat16Truncation> bf16Truncation{
      *this, "bf16-truncation",
      llvm::cl::desc("How f32 -> bf16 roundings are lowered (rope-expand-bf16 "
                     "truncation=): `bits`, integer arithmetic for any target "
                     "(the default), or `target`, the target's conversion "
                     "instruction (vcvtneps2bf16 with AVX512-BF16, which "
                     "flushes results below 2^-126 to zero)"),
      llvm::cl::init(BFloat16Truncation::Bits),
      llvm::cl::values(clEnumValN(BFloat16Truncation::Bits, "bits",
                                  "integer arithmetic on the bits"),
                       clEnumValN(BFloat16Truncation::Target, "target",
                                  "the target's conversion instruction"))};
  PassOptions::Option<bool> outlineRepeats{
      *this, "outline-repeats",
      llvm::cl::desc("Outline a function body's repeated stretch of ops (a "
                     "model's layers) into one function called once per "
                     "repeat (rope-outline-repeats), so that the passes after "
                     "it and LLVM compile one layer, not all of them"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> outlineMaxOps{
      *this, "outline-max-ops",
      llvm::cl::desc("Cut function bodies of more operations than this into "
                     "outlined chunks of about this many "
                     "(rope-outline-chunks), so that LLVM optimizes functions "
                     "of bounded size; 0 keeps them whole"),
      llvm::cl::init(2000)};
  PassOptions::Option<bool> checked{
      *this, "checked",
      llvm::cl::desc("Check at run time what the verifiers cannot when sizes "
                     "are dynamic (generate-runtime-verification on the "
                     "input: rope.apply's operands against each other and "
                     "its positions against the cos/sin cache, tensor "
                     "indices and slices, linalg operand sizes); the code "
                     "then runs on one thread, whatever num-threads says"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> runtimeTraps{
      *this, "runtime-traps",
      llvm::cl::desc("Failed checks (checked=true, allocation sizes) call "
                     "the rope runtime's ropeRuntimeTrap (libRopeJit: an "
                     "exception in Python) instead of printing and aborting "
                     "as upstream's cf.assert lowering does"),
      llvm::cl::init(false)};
};

/// rope IR (on tensors) -> LLVM dialect, runnable by mlir-runner or the JIT:
/// convert-rope-to-vector (or convert-rope-to-linalg with vectorize=false),
/// one-shot bufferization (destinations reused in place), ownership-based
/// deallocation, contractions tiled and vectorized on buffers
/// (rope-vectorize-contractions), other linalg ops to loops, the token loop
/// sequential or OpenMP-parallel, polynomial f32 sin/cos, then the LLVM
/// conversions.
void buildRopeToLLVMCpuPipeline(OpPassManager &pm,
                                const RopeToLLVMCpuPipelineOptions &options);

/// rope-to-nvvm's angle option: AngleMethod, or chosen by the chip.
enum class GPUAngle { Auto, F64, Turns };

/// The angle method `angle` means on `chip`: with Auto, F64 where the chip
/// has fast f64 (sm_60, sm_70, sm_80, sm_90, sm_100 and their variants:
/// half the f32 rate or better), else Turns (consumer and embedded chips:
/// 1/32 to 1/64 of the f32 rate).
AngleMethod resolveGPUAngle(GPUAngle angle, StringRef chip);

/// Options of the `rope-to-nvvm` pipeline.
struct RopeToNVVMPipelineOptions
    : public PassPipelineOptions<RopeToNVVMPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_80, sm_90, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features; CUDA 13's ptxas needs +ptx80 or later for "
                     "sm_80/sm_90"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu.binary format: isa (PTX text, needs no CUDA), bin "
                     "(cubin) or fatbin (both need the toolkit's ptxas)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root: libdevice (sin/cos) is linked from "
                     "<toolkit>/nvvm/libdevice, ptxas/fatbinary run from "
                     "<toolkit>/bin"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM optimization level for NVPTX"),
      llvm::cl::init(3)};
  PassOptions::Option<int64_t> blockSize{*this, "block-size",
                                         llvm::cl::desc("Threads per block"),
                                         llvm::cl::init(256)};
  PassOptions::Option<int64_t> maxBlocks{
      *this, "max-blocks",
      llvm::cl::desc("Upper bound on the grid (grid-stride loop over tokens)"),
      llvm::cl::init(4096)};
  PassOptions::Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("16-byte accesses (several pairs per thread) where "
                     "alignment allows"),
      llvm::cl::init(true)};
  PassOptions::Option<GPUAngle> angle{
      *this, "angle",
      llvm::cl::desc("How rope.apply forms the angle position * theta: "
                     "`auto` (the default: `f64` on chips with fast f64, "
                     "sm_60/70/80/90/100, else `turns`), `f64`, or `turns` "
                     "(i64 phase steps and f32 only)"),
      llvm::cl::init(GPUAngle::Auto),
      llvm::cl::values(
          clEnumValN(GPUAngle::Auto, "auto", "by the chip's f64 rate"),
          clEnumValN(GPUAngle::F64, "f64", "in f64"),
          clEnumValN(GPUAngle::Turns, "turns", "i64 phase steps and f32"))};
  PassOptions::Option<bool> approximateTrig{
      *this, "approximate-trig",
      llvm::cl::desc("f32 sin/cos by rope-approximate-trig's polynomials (as "
                     "on the CPU; branch-free, no stack) instead of "
                     "libdevice's __nv_sinf/__nv_cosf"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> kernelBarePtr{
      *this, "kernel-bare-ptr",
      llvm::cl::desc("Pass each memref to the kernel as a bare pointer "
                     "(static shapes only; what bench/gpu's driver-API "
                     "harness expects)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> attentionBlockSize{
      *this, "attention-block-size",
      llvm::cl::desc("rope.attention: query rows (threads) per block; each "
                     "thread runs one row's online softmax over every key"),
      llvm::cl::init(128)};
  PassOptions::Option<int64_t> attentionKeyTile{
      *this, "attention-key-tile",
      llvm::cl::desc("rope.attention: keys per step of a row's online "
                     "softmax (the scores and a fused K rotation of one "
                     "step are per-thread buffers)"),
      llvm::cl::init(16)};
  PassOptions::Option<std::string> attentionFuseKey{
      *this, "attention-fuse-key",
      llvm::cl::desc("rope.attention: rotate K per key tile inside each "
                     "thread (always, never, or auto: only for one query "
                     "per row of K/V, i.e. decode); otherwise the rope.apply "
                     "of K is its own kernel"),
      llvm::cl::init("auto")};
};

/// rope IR (on tensors) -> host LLVM dialect + a `gpu.binary`:
/// rope.attention tiled into one query row per scf.forall iteration
/// (rope-tile-attention, rotations of Q and, in decode, K fused) and the
/// tiles in those loops decomposed (rope-decompose-in-forall),
/// convert-rope-to-gpu for the remaining rope.apply, one-shot bufferization
/// (destinations in place), the forall mapped to blocks x threads
/// (rope-map-forall-to-gpu, convert-parallel-loops-to-gpu),
/// index computations sunk into the launch, kernel outlining, the NVVM target
/// attached, GPU ops to NVVM (math to libdevice), host to LLVM, and
/// gpu-module-to-binary. Mirrors upstream's gpu::buildLowerToNVVMPassPipeline,
/// with the toolkit path (for libdevice) that its options lack.
void buildRopeToNVVMPipeline(OpPassManager &pm,
                             const RopeToNVVMPipelineOptions &options);

/// rope-tile-attention's options for a decode step (one query tile), which
/// both pipelines that tile attention (`rope-optimize`,
/// `rope-fuse-into-attention`) take under the same names and hand on
/// (forwardTo): the CPU's choices, off by default as in
/// the pass; `rope_mlir.jit`'s default pipeline and the attention kernels of
/// `rope_mlir.attention` set them.
template <typename Derived>
struct AttentionTilingPipelineOptions : public PassPipelineOptions<Derived> {
  ::mlir::detail::PassOptions::Option<bool> shareKeyRotation{
      *this, "share-key-rotation",
      llvm::cl::desc("rope-tile-attention's share-key-rotation: in decode "
                     "(one query tile, K's rotation fused), a key tile holds "
                     "every KV head, so its rotation computes cos/sin once "
                     "per key for all of them; fewer parallel tiles (the "
                     "choice for one CPU thread, or with decode-key-splits)"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<bool> peelKeyTiles{
      *this, "peel-key-tiles",
      llvm::cl::desc("rope-tile-attention's peel-key-tiles: the key loop's "
                     "last, partial tile peeled, so that the others have a "
                     "static extent, which the CPU register tiles need to "
                     "pack K and V"),
      llvm::cl::init(false)};
  ::mlir::detail::PassOptions::Option<int64_t> decodeKeySplits{
      *this, "decode-key-splits",
      llvm::cl::desc("rope-tile-attention's decode-key-splits: a decode "
                     "step's keys in at most this many blocks computed in "
                     "parallel and merged (split-K; with "
                     "rope-to-llvm-cpu{num-threads=N}, N); 0 or 1: one key "
                     "loop"),
      llvm::cl::init(0)};

  /// Hands the three on to rope-tile-attention's options.
  template <typename TileOptions> void forwardTo(TileOptions &tile) const {
    tile.shareKeyRotation = shareKeyRotation;
    tile.peelKeyTiles = peelKeyTiles;
    tile.decodeKeySplits = decodeKeySplits;
  }
};

/// Options of the `rope-optimize` pipeline.
struct RopeOptimizePipelineOptions
    : public AttentionTilingPipelineOptions<RopeOptimizePipelineOptions> {
  PassOptions::Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Say why a rotation-shaped computation is not raised "
                     "and why a contraction fed by rope.apply is not fused, "
                     "as remarks"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> portable{
      *this, "portable",
      llvm::cl::desc(
          "Upstream dialects only, for another compiler with its default "
          "flags (IREE): the raised rope.apply lowered to linalg with the "
          "angle formed without f64 where the frequencies are constant "
          "tables (angle=turns-or-f64: a consumer demoting f64 keeps it "
          "exact), rope.attention decomposed into linalg (no loops of our "
          "own: the consumer forms its dispatches and fuses the rotation "
          "with its own attention handling); no rope op is left"),
      llvm::cl::init(false)};
};

/// What a compiler inserts ahead of its own lowering: inline (frontends
/// split attention into helper functions), rope-raise (RoPE
/// written out by a frontend becomes rope.apply, attention rope.attention),
/// canonicalize and CSE (the frontend's now dead cos/sin computations go),
/// rope-raise-softmax (a softmax the attention raising did not take, as
/// linalg.softmax), rope-tile-attention (rope.attention as FlashAttention
/// loops with the rotations of Q and K fused in), then rope-fuse-into-scores
/// (a raised rotation feeding attention scores the raising did not take is
/// fused into their tiles): raise, tile, fuse, each once. The result is still
/// on tensors; any
/// lowering follows (rope-to-llvm-cpu, rope-to-nvvm, or another compiler's).
/// With `portable`, raise and clean up, then lower every rope op into
/// upstream linalg on tensors instead of tiling (docs/IREE.md).
void buildRopeOptimizePipeline(OpPassManager &pm,
                               const RopeOptimizePipelineOptions &options);

/// Options of the `rope-fuse-into-attention` pipeline: those of the
/// rope-fuse-into-attention pass it replaced, with their names and defaults.
struct RopeFuseIntoAttentionPipelineOptions
    : public AttentionTilingPipelineOptions<
          RopeFuseIntoAttentionPipelineOptions> {
  PassOptions::Option<int64_t> queryTileSize{
      *this, "query-tile-size",
      llvm::cl::desc("Tile size of the query (sequence) dim"),
      llvm::cl::init(32)};
  PassOptions::Option<int64_t> keyTileSize{
      *this, "key-tile-size",
      llvm::cl::desc("Tile size of the key (sequence) dim"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> decodeKeyTileSize{
      *this, "decode-key-tile-size",
      llvm::cl::desc("rope-tile-attention's decode-key-tile-size: the key "
                     "tile when the queries are one tile (a decode step); "
                     "0: key-tile-size"),
      llvm::cl::init(256)};
  PassOptions::Option<std::string> fuseKey{
      *this, "fuse-key",
      llvm::cl::desc("Fuse the key rotation into the key loop: always, never, "
                     "or auto (only when the query dim is one tile)"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> tileHeads{
      *this, "tile-heads",
      llvm::cl::desc("Also tile the head dims by 1 (by default they stay "
                     "whole in a tile, so cos/sin is computed once per token "
                     "for all heads); in whole attention, the query heads of "
                     "a GQA group"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> wholeAttention{
      *this, "whole-attention",
      llvm::cl::desc("When the scores go on through an elementwise "
                     "scale/mask, linalg.softmax over the keys and a "
                     "contraction with V, fuse all of it into the loops with "
                     "an online softmax (raise the softmax and the attention, "
                     "then tile rope.attention)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelLoops{
      *this, "parallel-loops",
      llvm::cl::desc("Make the loops over batch dims and query tiles one "
                     "scf.forall (OpenMP threads under "
                     "rope-to-llvm-cpu{num-threads=N}); the key loop stays an "
                     "scf.for"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("Say why a softmax, an attention or a contraction fed by "
                     "rope.apply is not raised or fused, as remarks"),
      llvm::cl::init(false)};
};

/// Rotations fused into attention, from attention written out in linalg:
/// with `whole-attention`, rope-raise-softmax, rope-raise-attention and
/// rope-tile-attention (FlashAttention loops, Q and K rotated per tile);
/// then rope-fuse-into-scores for Q·Kᵀ contractions left (scores that are not
/// part of attention the raising takes). Each pass does one of these jobs;
/// this pipeline keeps the name and options of the pass that did them all.
void buildRopeFuseIntoAttentionPipeline(
    OpPassManager &pm, const RopeFuseIntoAttentionPipelineOptions &options);

/// Registers the named pipelines with the global registry.
void registerRopePipelines();

} // namespace rope
} // namespace mlir

#endif // ROPE_PIPELINES_PIPELINES_H
