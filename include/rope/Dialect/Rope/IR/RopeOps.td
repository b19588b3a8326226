//===- RopeOps.td - Rope operations ------------------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "rope/Dialect/Rope/IR/RopeAttrs.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/RuntimeVerifiableOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/TilingInterface.td"

def Rope_ApplyOp : Rope_Op<"apply", [
    Pure,
    AttrSizedOperandSegments,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>,
    DeclareOpInterfaceMethods<AggregatedOpInterface, ["decomposeOperation"]>,
    DeclareOpInterfaceMethods<TilingInterface, [
        "getLoopIteratorTypes", "getIterationDomain", "getTiledImplementation",
        "getResultTilePosition", "generateResultTileValue"]>,
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>
  ]> {
  let summary = "rotary position embedding of the last (head) dimension";
  let description = [{
    Rotates the channel pairs of the last dimension `D` of `input` by the
    angle `pos * theta_i` (see `SEMANTICS.md` §1):

        y1 = x1 * c - x2 * s,   y2 = x2 * c + x1 * s,
        c = a * cos(pos * theta_i),   s = a * sin(pos * theta_i)

    and writes the result into `init` (destination style, so bufferization can
    reuse the destination buffer).

    Attributes:
    - `layout`: which channels form pair `i`: `half` = `(i, i + P/2)`,
      `interleaved` = `(2i, 2i + 1)`.
    - `rotary_dim` (`P`, default `D`): the first `P` channels are rotated,
      channels `[P, D)` pass through unchanged. Even, `0 < P <= D`. The head
      dimension `D` is static and at most 65536 (`kMaxHeadDim`).
    - `token_dims`: the dimensions that positions index (token dims); the
      others except the last are broadcast (heads). Default: every dimension
      but the last two (`[*tokens, H, D]`), or `[0]` for rank 2 (`[T, D]`).
      `[B, H, S, D]` is `token_dims = array<i64: 0, 2>`.
    - `freqs`: how `theta_i` is derived when cos/sin are computed in the op
      (default `#rope.default<base = 10000.0>`): one attribute per scaling
      scheme (`#rope.linear`, `#rope.ntk`, `#rope.dynamic_ntk`, `#rope.yarn`,
      `#rope.llama3`, `#rope.longrope`, `#rope.proportional`). Static schemes
      fold to a constant table; dynamic ones (`dynamic_ntk`, `longrope`)
      depend on the call's runtime length `l`, max position + 1 over the
      call (`offset + S` for offsets), or the `length(%l)` operand when given,
      and are computed once per call.
    - `magnitude` (`a`, default 1): multiplies cos and sin (YaRN's attention
      factor, LongRoPE's scaling), explicit in the IR. When `freqs` defines a
      magnitude (`yarn`, `longrope`), `magnitude` must equal it.
    - `mrope`: multimodal RoPE (`#rope.mrope`): positions get a leading axis
      of size 3 (t, h, w) and each frequency takes its position from the
      axis its section assigns.
    - `inverse`: rotate by `-pos` (`s -> -s`).

    Neighbours fused into the rotation (docs/FUSIONS.md; each optional):
    - `norm(%w)` with `norm_epsilon`: QK-norm before the rotation, an RMSNorm
      over the head dim: `x' = w * (x * rsqrt(mean_D(x^2) + eps))`, over all
      `D` channels (pass-through ones included), in the compute type. `%w`
      is a `[D]` float tensor; `norm_epsilon` is required with it.
    - `quant_scale(%s)`: quantized output. The destination's element type is
      `f8E4M3FN`, `f8E5M2` or `i8` (input f16/bf16/f32), and every output
      channel is `q = sat(y * s)`: the product in f32, then for fp8 clamped
      to the largest finite value (+-448, +-57344; NaN stays NaN) and rounded
      to nearest even; for i8 rounded to nearest even, clamped to
      [-128, 127], NaN -> 0. `%s` is an f32 `tensor<f32>` (per tensor) or
      `tensor<Hxf32>` indexed by the op's one head dim (per head). `s` is the
      multiplier (FlashInfer's `quant_scale`); vLLM's dequantization scale
      is its reciprocal.
    - `slots(%s)`: KV-cache append. `init` is then a cache: the input's rank,
      the same head dims and `D`, token dims of any sizes (`[B, max_len, H,
      D]`, `[B, H, max_len, D]` at the input's token dims, or paged pages
      `[num_pages * page_size, H, D]` collapsed). `%s` is an `i32`/`i64`
      tensor shaped like the input's token dims; token `t`'s rows are
      written at the cache's token coordinates `delinearize(s[t], cache
      token sizes)` (row-major: for pages, `page * page_size + offset`,
      vLLM's `slot_mapping`), and the result is the whole cache, every other
      slot unchanged. A slot outside `[0, prod(cache token sizes))` (vLLM's
      `-1` padding) writes nothing: never out of bounds. Two tokens with one
      slot leave that slot's value unspecified (the caller's to avoid; the
      Python entry points refuse it). The fused form writes each rotated row
      straight into its cache row (no rotated temporary); not tileable (a
      scatter has no result tile).

    Positions are given one of three ways:
    - `positions(%p)`: an `i32`/`i64` tensor shaped like the token dims
      (with `mrope`: `[3, token dims...]`, one position per axis t, h, w);
    - `offset(%o)`: `pos = o + s` where `s` is the index along the last token
      dim; `%o` is an integer scalar, a rank-0 tensor, or a rank-1 tensor with
      one offset per index of the first token dim (per batch row);
    - neither: `pos = s` (computed frequencies only).

    cos/sin come from the frequencies (`freqs`), or from `cache(%cos, %sin)`:
    with `positions` or `offset`, caches are `[M, P/2]` tables gathered by
    position; without, they are pre-gathered and shaped like the token dims
    plus `P/2`. A position outside `[0, M)` never reads out of bounds: the
    rotated channels of that token become NaN.

    The op implements `TilingInterface` over every dim but the channels (a
    rotated pair spans them); a tile re-expresses positions for its slice and
    keeps the whole call's length for dynamic schemes.

    Arithmetic is done in f32 for f16/bf16/f32 data and in f64 for f64 data;
    angles are computed in f64 with an explicit range reduction (`SEMANTICS.md`
    §5), once per (position, frequency) pair and shared across heads.

    Example (Llama, `[B, S, H, D]`, explicit positions, half layout):

    ```mlir
    %y = rope.apply ins(%q : tensor<2x16x32x128xf32>)
           positions(%pos : tensor<2x16xi64>)
           outs(%init : tensor<2x16x32x128xf32>)
           {freqs = #rope.default<base = 500000.0>} -> tensor<2x16x32x128xf32>
    ```

    Example (Qwen2.5 with YaRN: the attention factor `0.1 ln 4 + 1` is
    stated by the op and checked against the scheme):

    ```mlir
    %y = rope.apply ins(%q : tensor<?x28x128xbf16>)
           positions(%pos : tensor<?xi64>)
           outs(%init : tensor<?x28x128xbf16>)
           {freqs = #rope.yarn<base = 1000000.0, factor = 4.0,
                               original_max_position_embeddings = 32768>,
            magnitude = 1.1386294361119891} -> tensor<?x28x128xbf16>
    ```

    Example (GPT-J decode step, interleaved, 64 of 256 channels rotated,
    cos/sin cache gathered at `offset + s`):

    ```mlir
    %y = rope.apply ins(%k : tensor<1x1x16x256xf16>)
           offset(%off : i64)
           cache(%cos, %sin : tensor<2048x32xf32>, tensor<2048x32xf32>)
           outs(%init : tensor<1x1x16x256xf16>)
           {layout = #rope.layout<interleaved>, rotary_dim = 64 : i64}
           -> tensor<1x1x16x256xf16>
    ```

    Example (Qwen3's K: QK-norm, rotation and an fp8 output with one scale
    per KV head, one pass over x):

    ```mlir
    %k8 = rope.apply ins(%k : tensor<?x8x128xbf16>)
            positions(%pos : tensor<?xi64>)
            norm(%w : tensor<128xbf16>)
            quant_scale(%s : tensor<8xf32>)
            outs(%init : tensor<?x8x128xf8E4M3FN>)
            {freqs = #rope.default<base = 1000000.0>, norm_epsilon = 1.0e-06}
            -> tensor<?x8x128xf8E4M3FN>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$input,
    Optional<AnyRankedTensor>:$positions,
    Optional<AnyType>:$offset,
    Optional<AnyType>:$length,
    Optional<AnyRankedTensor>:$cos,
    Optional<AnyRankedTensor>:$sin,
    Optional<AnyRankedTensor>:$norm_weight,
    Optional<AnyRankedTensor>:$quant_scale,
    Optional<AnyRankedTensor>:$slots,
    AnyRankedTensor:$init,
    DefaultValuedAttr<Rope_LayoutAttr, "::mlir::rope::Layout::half">:$layout,
    OptionalAttr<I64Attr>:$rotary_dim,
    OptionalAttr<DenseI64ArrayAttr>:$token_dims,
    OptionalAttr<Rope_FrequencyAttrInterface>:$freqs,
    OptionalAttr<Rope_MRopeAttr>:$mrope,
    DefaultValuedAttr<F64Attr, "1.0">:$magnitude,
    UnitAttr:$inverse,
    OptionalAttr<F64Attr>:$norm_epsilon
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`offset` `(` $offset^ `:` type($offset) `)`)?
    (`length` `(` $length^ `:` type($length) `)`)?
    (`cache` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    (`norm` `(` $norm_weight^ `:` type($norm_weight) `)`)?
    (`quant_scale` `(` $quant_scale^ `:` type($quant_scale) `)`)?
    (`slots` `(` $slots^ `:` type($slots) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict `->` type($result)
  }];

  let builders = [
    // Half layout, P = D, default frequencies, unit magnitude; positions
    // optional (null: the index along the last token dim). Set the other
    // attributes on the result.
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$init,
                   CArg<"::mlir::Value", "{}">:$positions), [{
      build($_builder, $_state, init.getType(), input, positions,
            /*offset=*/::mlir::Value(), /*length=*/::mlir::Value(),
            /*cos=*/::mlir::Value(),
            /*sin=*/::mlir::Value(), /*norm_weight=*/::mlir::Value(),
            /*quant_scale=*/::mlir::Value(), /*slots=*/::mlir::Value(), init,
            ::mlir::rope::LayoutAttr::get($_builder.getContext(),
                                          ::mlir::rope::Layout::half),
            /*rotary_dim=*/nullptr, /*token_dims=*/nullptr, /*freqs=*/nullptr,
            /*mrope=*/nullptr,
            $_builder.getF64FloatAttr(1.0), /*inverse=*/nullptr,
            /*norm_epsilon=*/nullptr);
    }]>
  ];

  let extraClassDeclaration = [{
    /// How the op obtains the position of each token.
    enum class PositionKind { Explicit, Offset, Implicit };
    /// Where the op's cos/sin values come from.
    enum class CosSinSource { Computed, GatheredCache, PregatheredCache };

    PositionKind getPositionKind();
    CosSinSource getCosSinSource();

    /// True when the op only rotates: no QK-norm before it, no quantized
    /// output or cache append after it. Rewrites that reason about the
    /// rotation alone (composition, fusion into attention) require it.
    bool isPlainRotation() {
      return !getNormWeight() && !getQuantScale() && !getSlots();
    }
    /// The element type of the destination (the input's, or the quantized
    /// storage type with `quant_scale`).
    Type getStorageElementType() {
      return ::llvm::cast<RankedTensorType>(getInit().getType())
          .getElementType();
    }
    /// The single head dim a per-head `quant_scale` is indexed by, if the
    /// op has exactly one head dim.
    std::optional<int64_t> getSingleHeadDim();

    RankedTensorType getInputType() {
      return ::llvm::cast<RankedTensorType>(getInput().getType());
    }
    /// The head dimension `D` (static by verification).
    int64_t getHeadDim() { return getInputType().getShape().back(); }
    /// `P`: the `rotary_dim` attribute, or `D`.
    int64_t getRotaryDimOrDefault();
    /// The token dims, defaulted as documented.
    ::llvm::SmallVector<int64_t> getTokenDimsOrDefault();
    /// The frequency attribute, or the default (`base = 10000`).
    FrequencyAttrInterface getFreqsOrDefault();
    /// True when the op is the identity whatever the input (computed
    /// frequencies, unit magnitude, all positions provably zero).
    bool isIdentity();

    /// DestinationStyleOpInterface.
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];

  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}


def Rope_CacheWriteOp : Rope_Op<"cache_write", [
    Pure,
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>,
    DeclareOpInterfaceMethods<AggregatedOpInterface, ["decomposeOperation"]>,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
        ["reifyResultShapes"]>
  ]> {
  let summary = "writes rows into a KV cache at slots (V beside a rotated K)";
  let description = [{
    The cache append of `rope.apply`'s `slots` without the rotation: the
    value rows that go into a KV cache next to the rotated keys (vLLM's
    `reshape_and_cache`, FlashInfer's `append_paged_kv_cache`). `input` is
    `[tokens..., heads..., D]` with `token_dims` as for `rope.apply`;
    `init` is the cache (the input's rank, the same head dims and `D`, token
    dims of any sizes); `%slots` (`i32`/`i64`, shaped like the input's token
    dims) gives each token's slot, delinearized over the cache's token dims.
    A slot outside `[0, prod(cache token sizes))` writes nothing. The result
    is the cache with the token rows written, every other slot unchanged.

    With `quant_scale(%s)` the cache holds `f8E4M3FN`, `f8E5M2` or `i8`
    values stored as `rope.apply` stores them (`sat(x * s)`, docs/FUSIONS.md),
    `%s` a `tensor<f32>` or `tensor<Hxf32>` indexed by the single head dim.

    ```mlir
    %vc = rope.cache_write ins(%v : tensor<?x8x128xbf16>)
            slots(%slot : tensor<?xi64>)
            outs(%vcache : tensor<4096x8x128xbf16>)
            -> tensor<4096x8x128xbf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$input,
    AnyRankedTensor:$slots,
    Optional<AnyRankedTensor>:$quant_scale,
    AnyRankedTensor:$init,
    OptionalAttr<DenseI64ArrayAttr>:$token_dims
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    `slots` `(` $slots `:` type($slots) `)`
    (`quant_scale` `(` $quant_scale^ `:` type($quant_scale) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict `->` type($result)
  }];

  let extraClassDeclaration = [{
    RankedTensorType getInputType() {
      return ::llvm::cast<RankedTensorType>(getInput().getType());
    }
    /// The element type of the cache.
    Type getStorageElementType() {
      return ::llvm::cast<RankedTensorType>(getInit().getType())
          .getElementType();
    }
    /// The token dims, defaulted as for `rope.apply`.
    ::llvm::SmallVector<int64_t> getTokenDimsOrDefault();
    /// The single head dim a per-head `quant_scale` is indexed by, if the
    /// op has exactly one head dim.
    std::optional<int64_t> getSingleHeadDim();

    /// DestinationStyleOpInterface.
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];

  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Rope_YieldOp : Rope_Op<"yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["AttentionOp", "OnlineAttentionOp"]>]> {
  let summary = "yields the modified score of an attention score region";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

class Rope_AttentionBase<string mnemonic, list<Trait> traits = []>
    : Rope_Op<mnemonic, !listconcat(traits, [
        Pure,
        AttrSizedOperandSegments,
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
            ["reifyResultShapes"]>,
        DeclareOpInterfaceMethods<AggregatedOpInterface,
            ["decomposeOperation"]>,
        DeclareOpInterfaceMethods<TilingInterface, [
            "getLoopIteratorTypes", "getIterationDomain",
            "getTiledImplementation", "getResultTilePosition",
            "generateResultTileValue"]>,
        DeclareOpInterfaceMethods<RuntimeVerifiableOpInterface>])> {
  // Operands and attributes shared by both forms; `sinks` (rope.attention
  // only: they start the online state) and the destinations differ.
  dag commonOperands = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$query_positions,
    Optional<Index>:$query_offset,
    Optional<Index>:$key_offset
  );
  dag commonAttributes = (ins
    AffineMapArrayAttr:$indexing_maps,
    F64Attr:$scale,
    UnitAttr:$causal,
    OptionalAttr<I64Attr>:$window,
    OptionalAttr<I64Attr>:$query_dim
  );

  code commonClassDeclaration = [{
    /// The roles of the loop dims (batch, query, key, channels), inferred
    /// from the indexing maps; verified to exist.
    ::mlir::rope::AttentionDims getDims();
    /// The float type scores, the softmax and P·V accumulate in: f64 when
    /// an operand is f64, else f32.
    ::mlir::FloatType getAccumulatorType();
    /// Maps of the inputs in operand order (query, key, value, [mask],
    /// [query_positions], [sinks]) and of the first destination.
    ::mlir::AffineMap getQueryMap() { return getIndexingMapsArray()[0]; }
    ::mlir::AffineMap getKeyMap() { return getIndexingMapsArray()[1]; }
    ::mlir::AffineMap getValueMap() { return getIndexingMapsArray()[2]; }
    ::mlir::AffineMap getMaskMap() {
      return getMask() ? getIndexingMapsArray()[3] : ::mlir::AffineMap();
    }
    ::mlir::AffineMap getQueryPositionsMap() {
      return getQueryPositions()
                 ? getIndexingMapsArray()[getMask() ? 4 : 3]
                 : ::mlir::AffineMap();
    }
    ::mlir::AffineMap getSinksMap() {
      return getSinks() ? getIndexingMapsArray()[3 + (getMask() ? 1 : 0) +
                                                 (getQueryPositions() ? 1 : 0)]
                        : ::mlir::AffineMap();
    }
    ::mlir::AffineMap getOutputMap() {
      return getIndexingMapsArray().back();
    }
    ::llvm::SmallVector<::mlir::AffineMap> getIndexingMapsArray() {
      return ::llvm::to_vector(
          getIndexingMaps().getAsValueRange<::mlir::AffineMapAttr>());
    }
    /// The number of loops (dims of every indexing map).
    unsigned getNumLoops() { return getQueryMap().getNumDims(); }
    /// The score region's block, or null when there is none.
    ::mlir::Block *getModifierBlock() {
      return getModifier().empty() ? nullptr : &getModifier().front();
    }
    /// Whether a key can be masked by position (causal or window).
    bool hasPositionMask() { return getCausal() || getWindow().has_value(); }
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Rope_AttentionOp : Rope_AttentionBase<"attention"> {
  let summary = "scaled dot-product attention with GQA, masks, sinks and a "
                "score modifier";
  let description = [{
    `O = softmax_k2(modify(scale · Q·Kᵀ) + mask) · V`, written into `init`.
    The loop dims and their roles come from `indexing_maps` (one per input,
    in operand order, then the output), as in IREE's attention op:

    - `k1`, the channels of Q·Kᵀ: in the query and key maps only;
    - `k2`, the keys: in the key and value maps only (the softmax dim);
    - `m`, the queries: in the query and output maps only;
    - `n`, the channels of V (`Dv`, may differ from `D`): in the value and
      output maps only;
    - every other dim is a batch dim: in the query and output maps, and in
      the key/value maps or not. A batch dim missing from K and V
      broadcasts them: grouped-query attention is Q viewed as
      `[B, Hkv, G, S, D]` (a free `tensor.expand_shape`) with the group dim
      `G` missing from the K/V maps, so `repeat_kv` is never materialized.
      Such a dim is in the query and output maps only, like `m`: when more
      than one dim is, `query_dim = i` says which loop is `m`.

    Every map is a projected permutation; any order of the dims in a tensor
    works (`[B, H, S, D]`, `[B, S, H, D]`, ...).

    The score of query `m` and key `k2` (batch dims implied), in the
    accumulator type `A` (f64 if Q, K or V is f64, else f32; f16/bf16
    operands are extended):
      1. `s = scale · Σ_k1 Q·K`;
      2. `s = modify(s, i...)` when the op has a region: its block takes `s`
         and the index of every loop dim but `k1` and `n`, in loop order
         (softcap: `c · tanh(s / c)`; ALiBi: a slope times `k2 − m`), and
         yields the new score with `rope.yield`;
      3. masking: a float `mask` is added (−inf removes the key); an `i1`
         `mask` keeps the keys where it is true (elsewhere −inf);
         `causal` keeps `kpos <= qpos`, `window = W` (with `causal`)
         also requires `kpos > qpos − W`. Positions: `kpos = key_offset + k2`
         (`key_offset` defaults to 0); `qpos = query_positions[...]` when
         that operand is given (its map names batch dims and `m`; e.g. decode
         with per-row positions, where `causal` also masks the part of a
         longer KV cache beyond each row's position), else
         `qpos = query_offset + m`, `query_offset` defaulting to
         `Sk − Sq` (bottom-right aligned: the last query sees every key);
      4. `p = softmax over k2` in `A`, then `O = Σ_k2 p · V` converted to the
         output type. A row whose keys are all masked has a zero softmax
         denominator and gives NaN, as softmax of an all-−inf row does. A
         masked key's probability is 0, which still multiplies its V row: V
         must be finite there (a NaN or Inf propagates, as in softmax(...)·V
         written out), e.g. in a KV cache beyond the valid length.
      5. attention sinks (gpt-oss; IREE, vLLM and FlashInfer define them
         alike): with a `sinks` operand, a float whose map names batch dims
         only (e.g. one learned logit per head, `[Hkv, G]` under GQA), the
         softmax of step 4 is over the row's scores and one more logit,
         the row's sink `t`, which takes part in the max and adds
         `exp(t − max)` to the denominator but has no V row:
         `p_k2 = exp(s_k2 − M) / (exp(t − M) + Σ_k2 exp(s_k2 − M))` with
         `M = max(t, max_k2 s)`. The sink is not scaled, modified or masked.
         A row whose keys are all masked then gives 0 (the sink takes all the
         weight), not NaN; a sink of −inf is no sink.

    The op is destination-passing (`outs`) and implements TilingInterface
    over the batch, query and `n` dims (the keys and `k1` stay whole: the
    softmax needs every key; tile the keys through `rope.online_attention`).
    `AggregatedOpInterface` decomposes it into one online-attention step
    over all keys, started from (acc 0, max −inf, sum 0), or with sinks
    from (acc 0, max t, sum exp(t − t) = 1, 0 where t = −inf), and a
    normalization acc / sum, i.e. plain linalg. The sinks are thus in the
    state before the first key: however the keys are tiled, each row counts
    its sink exactly once.

    ```mlir
    #q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
    #k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
    #v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
    #o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
    %o = rope.attention ins(%q, %k, %v : tensor<1x8x4x512x128xf32>,
             tensor<1x8x512x128xf32>, tensor<1x8x512x128xf32>)
           outs(%init : tensor<1x8x4x512x128xf32>)
           {indexing_maps = [#q, #k, #v, #o], scale = 0.088388 : f64, causal}
           -> tensor<1x8x4x512x128xf32>
    ```
  }];
  let arguments = !con(commonOperands, (ins Optional<AnyRankedTensor>:$sinks),
                       commonAttributes, (ins AnyRankedTensor:$init));
  let results = (outs AnyRankedTensor:$result);
  let regions = (region MaxSizedRegion<1>:$modifier);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`query_positions` `(` $query_positions^ `:` type($query_positions) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    (`key_offset` `(` $key_offset^ `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    `outs` `(` $init `:` type($init) `)`
    attr-dict-with-keyword ($modifier^)? `->` type($result)
  }];
  let extraClassDeclaration = commonClassDeclaration # [{
    /// DestinationStyleOpInterface.
    MutableOperandRange getDpsInitsMutable() { return getInitMutable(); }
  }];
}

def Rope_OnlineAttentionOp : Rope_AttentionBase<"online_attention"> {
  let summary = "one step of attention's online softmax over a block of keys";
  let description = [{
    The keys `k2` of this op are one block of a longer attention; the
    destinations carry the running state of every row across blocks:
    `acc` (the unnormalized output, in the accumulator type, indexed by the
    last indexing map), `max` and `sum` (the running maximum of the scores
    and the running softmax denominator, shaped like `acc` without its `n`
    dim, in the same order). With `s` the masked scores of this block
    (steps 1–3 of `rope.attention`, same operands, attributes and region):

      m' = max(max, max_k2 s)
      acc' = acc · exp(max − m') + Σ_k2 exp(s − m') · V
      sum' = sum · exp(max − m') + Σ_k2 exp(s − m')

    where a maximum of −inf (every key so far masked) shifts by 0 instead,
    so that masked keys add exactly 0. Starting from (0, −inf, 0) and
    dividing `acc` by `sum` after the last block gives `rope.attention`;
    starting from (0, t, 1) (0, −inf, 0 where t = −inf) gives it with the
    sinks `t` (the op has no `sinks` operand: a sink is part of the state
    it is handed, so a loop over key blocks adds it once).
    Because the destinations accumulate, the op tiles along the keys with a
    sequential loop (TilingInterface: batch, query and key dims; `k1` and
    `n` stay whole); `query_offset`/`key_offset` keep the positions of a
    tile absolute. `AggregatedOpInterface` decomposes it into linalg.
  }];
  let arguments = !con(commonOperands, commonAttributes,
      (ins AnyRankedTensor:$acc, AnyRankedTensor:$max, AnyRankedTensor:$sum));
  let results = (outs AnyRankedTensor:$acc_result, AnyRankedTensor:$max_result,
                      AnyRankedTensor:$sum_result);
  let regions = (region MaxSizedRegion<1>:$modifier);
  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`query_positions` `(` $query_positions^ `:` type($query_positions) `)`)?
    (`query_offset` `(` $query_offset^ `)`)?
    (`key_offset` `(` $key_offset^ `)`)?
    `outs` `(` $acc `,` $max `,` $sum `:` type($acc) `,` type($max) `,`
        type($sum) `)`
    attr-dict-with-keyword ($modifier^)? `->` type($acc_result) `,`
        type($max_result) `,` type($sum_result)
  }];
  let extraClassDeclaration = commonClassDeclaration # [{
    /// No sinks: they start the state (acc, max, sum) the op is handed.
    ::mlir::Value getSinks() { return {}; }
    /// Whether acc, max and sum are fills of (0, −inf, 0): the state before
    /// any key (a whole rope.attention's first block, no sinks).
    bool startsFromInitialState();
    /// The states (acc, max, sum) this op's keys leave when split into
    /// blocks each started from (0, −inf, 0), stacked along a new leading
    /// dim (`partials`: acc, max, sum of shape [blocks, ...]), merged into
    /// the state all the keys leave: m the largest of the blocks' maxima
    /// m_b, acc and sum the sums over the blocks, in order, of theirs times
    /// exp(m_b − m) (a maximum of −inf shifts by 0, as in the op's own
    /// rescale). Linalg on tensors, shaped like the op's destinations.
    ::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>
    mergeKeyBlockStates(::mlir::OpBuilder &b, ::mlir::Location loc,
                        ::mlir::ValueRange partials);
    /// DestinationStyleOpInterface.
    MutableOperandRange getDpsInitsMutable() {
      return MutableOperandRange(getOperation(),
                                 getOperation()->getNumOperands() - 3, 3);
    }
  }];
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
