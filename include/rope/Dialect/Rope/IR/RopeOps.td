//===- RopeOps.td - Rope operations -------------------------*- tablegen -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEOPS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "rope/Dialect/Rope/IR/RopeAttrs.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
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
        "getResultTilePosition", "generateResultTileValue"]>
  ]> {
  let summary = "rotary position embedding of the last (head) dimension";
  let description = [{
    Rotates the channel pairs of the last dimension `D` of `input` by the
    angle `pos * theta_i` (see `ROPE.md` §1):

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
    angles are computed in f64 with an explicit range reduction (`ROPE.md`
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
  }];

  let arguments = (ins
    AnyRankedTensor:$input,
    Optional<AnyRankedTensor>:$positions,
    Optional<AnyType>:$offset,
    Optional<AnyType>:$length,
    Optional<AnyRankedTensor>:$cos,
    Optional<AnyRankedTensor>:$sin,
    AnyRankedTensor:$init,
    DefaultValuedAttr<Rope_LayoutAttr, "::mlir::rope::Layout::half">:$layout,
    OptionalAttr<I64Attr>:$rotary_dim,
    OptionalAttr<DenseI64ArrayAttr>:$token_dims,
    OptionalAttr<Rope_FrequencyAttrInterface>:$freqs,
    OptionalAttr<Rope_MRopeAttr>:$mrope,
    DefaultValuedAttr<F64Attr, "1.0">:$magnitude,
    UnitAttr:$inverse
  );
  let results = (outs AnyRankedTensor:$result);

  let assemblyFormat = [{
    `ins` `(` $input `:` type($input) `)`
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`offset` `(` $offset^ `:` type($offset) `)`)?
    (`length` `(` $length^ `:` type($length) `)`)?
    (`cache` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
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
            /*sin=*/::mlir::Value(), init,
            ::mlir::rope::LayoutAttr::get($_builder.getContext(),
                                          ::mlir::rope::Layout::half),
            /*rotary_dim=*/nullptr, /*token_dims=*/nullptr, /*freqs=*/nullptr,
            /*mrope=*/nullptr,
            $_builder.getF64FloatAttr(1.0), /*inverse=*/nullptr);
    }]>
  ];

  let extraClassDeclaration = [{
    /// How the op obtains the position of each token.
    enum class PositionKind { Explicit, Offset, Implicit };
    /// Where the op's cos/sin values come from.
    enum class CosSinSource { Computed, GatheredCache, PregatheredCache };

    PositionKind getPositionKind();
    CosSinSource getCosSinSource();

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

#endif // ROPE_DIALECT_ROPE_IR_ROPEOPS_TD
