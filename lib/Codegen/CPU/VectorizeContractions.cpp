//===- VectorizeContractions.cpp - Register-tiled vector contractions -----===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU pipeline lowered contractions (attention scores, P·V, user
// matmuls) with convert-linalg-to-loops: scalar loops, which
// hid every gain of fusing the rotation into attention. This lowers them on
// buffers to register tiles.
//
// Why not linalg::vectorize + upstream's vector.contract lowering: for the
// transposed-K contraction of Q·Kᵀ (head_dim innermost in both inputs) the
// vectorizer produces a broadcast/multi_reduction form, and lowering
// vector.contract through outer products transposes a K tile per reduction
// step. The two micro-kernels below are the ones a hand-written CPU kernel
// uses, chosen from which dim has unit stride, with accumulators carried in
// registers (scf.for iter_args) across the whole reduction loop.
//
//===----------------------------------------------------------------------===//

#include "rope/Codegen/CPU/VectorizeContractions.h"
#include "rope/Codegen/CPU/Passes.h"
#include "rope/Codegen/CPU/Prefetch.h"

#include "mlir/Dialect/AMX/AMXDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::rope {
#define GEN_PASS_DEF_ROPEVECTORIZECONTRACTIONSPASS
#include "rope/Codegen/CPU/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;

namespace {

/// How one operand of the contraction is indexed by the loop dims.
struct OperandAccess {
  Value memref;
  /// Loop dims -> memref dims; a projected permutation.
  AffineMap map;
  /// The loop dim of the innermost memref dim, when that dim has unit stride
  /// (so vector.load reads consecutive elements along it).
  std::optional<unsigned> unitStrideDim;

  /// The memref indices at the loop-dim values `ivs`.
  SmallVector<Value> indices(ArrayRef<Value> ivs) const {
    return llvm::map_to_vector(map.getResults(), [&](AffineExpr e) {
      return ivs[cast<AffineDimExpr>(e).getPosition()];
    });
  }
};

OperandAccess accessOf(linalg::LinalgOp op, OpOperand &operand) {
  OperandAccess access{operand.get(), op.getMatchingIndexingMap(&operand),
                       std::nullopt};
  auto type = cast<MemRefType>(operand.get().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() > 0 &&
      succeeded(type.getStridesAndOffset(strides, offset)) &&
      strides.back() == 1)
    access.unitStrideDim = access.map.getDimPosition(type.getRank() - 1);
  return access;
}

/// Whether any of `dims` indexes `access` (an outer dim: K of one KV head,
/// not the cos/sin every head shares).
bool isIndexedByAny(const OperandAccess &access, ArrayRef<unsigned> dims) {
  return llvm::any_of(
      dims, [&](unsigned d) { return access.map.isFunctionOfDim(d); });
}

/// Which micro-kernel, and the roles of the operands and loop dims in it.
struct RegisterTilePlan {
  enum class Form { OuterProduct, Dot } form;
  /// OuterProduct: `rowsOperand` is read as broadcast scalars and
  /// `vectorOperand` as vectors along `colDim`. Dot: both are read as
  /// vectors along `reductionDim`.
  OperandAccess rowsOperand, vectorOperand, output;
  unsigned rowDim, colDim, reductionDim;
  /// Every other loop dim, iterated one at a time around the tiles.
  SmallVector<unsigned> outerDims;
  /// OuterProduct from a Dot-shaped contraction: `packSource` (unit stride
  /// along the reduction, as K in Q·Kᵀ) is first transposed into a heap
  /// buffer [reduction][columns] of these static extents, which is then the
  /// vector operand.
  std::optional<OperandAccess> packSource;
  int64_t packReduction = 0, packColumns = 0;
  /// Whether `packSource` is indexed by no outer dim: one packing serves
  /// every outer index (the query heads of a GQA group).
  bool packShared = false;
  /// bf16 inputs multiplied in pairs by AVX512-BF16's vdpbf16ps
  /// (`x86vector.avx512.dot`): Dot form steps the reduction by two
  /// elements per f32 lane; the packed outer product's buffer holds pairs
  /// of consecutive reduction elements, [reduction/2][2·columns] bf16, and
  /// each row's pair is broadcast as one 32-bit unit.
  bool bf16Pairs = false;
  /// A packed outer product on AMX tiles (`bf16-products=amx`): rows in
  /// blocks of 16 and columns in blocks of 16 as tdpbf16ps tiles
  /// (`amx.tile_mulf`) over the packed buffer, whose [reduction/2]
  /// [2·columns] layout is the one tdpbf16ps takes for its second operand;
  /// bf16 rows are read where they lie (`bf16Pairs`: the rows left over as
  /// pairs), f32 rows split into bf16 parts (`packInterleaves`).
  bool amxTiles = false;
  /// The plain outer product's vector operand stored narrower than the
  /// accumulator (bf16 V of P·V): `packSource` is copied widened into the
  /// buffer instead of transposed, once per packing rather than once per
  /// row tile.
  bool packWidens = false;
  /// P·V on AMX tiles (`bf16-products=amx`, the rows operand f32 and the
  /// vector operand bf16): `packSource` is packed as interleaved pairs of
  /// its reduction rows, [reduction/2][2·columns] bf16 (tdpbf16ps' second
  /// operand), and each 16 rows of the rows operand are split into three
  /// bf16 parts whose sum is the f32 value exactly (splitRowsIntoBF16);
  /// one tile product per part. Rows left over read `packSource` widened.
  bool packInterleaves = false;
  /// Dot form over a sum of products, out + Σ_t row_t · column_t
  /// (planSumOfProducts): each `rowTerms[t]` is read as `rowsOperand` is,
  /// and column_t is computed per vector from `columnInputs` (each read as
  /// `vectorOperand` is) by `columnOps`, the payload's elementwise ops
  /// cloned on vectors. A key rotated inside the scores
  /// (rope-rotate-keys-in-scores): the key's two halves, cos and sin in,
  /// one term per rotated half, so that the rotated key is never stored.
  struct SumOfProducts {
    SmallVector<OperandAccess> rowTerms;
    SmallVector<OperandAccess> columnInputs;
    SmallVector<Value> columnArgs;
    SmallVector<Operation *> columnOps;
    SmallVector<Value> columnTerms;
    /// With `bf16Pairs`: the bf16 value each column term extends, which
    /// vdpbf16ps multiplies in pairs with the row term as stored.
    SmallVector<Value> narrowColumnTerms;
  };
  std::optional<SumOfProducts> sumOfProducts;
};

/// The dim of `dims` with the largest extent (dynamic counts as largest; the
/// innermost wins ties): the query group rather than the single query of a
/// decode step.
unsigned widestDim(ArrayRef<unsigned> dims, ArrayRef<int64_t> ranges) {
  auto extent = [&](unsigned d) {
    return ShapedType::isDynamic(ranges[d]) ? INT64_MAX : ranges[d];
  };
  unsigned best = dims.front();
  for (unsigned d : dims)
    if (extent(d) >= extent(best))
      best = d;
  return best;
}

void planPacking(RegisterTilePlan &plan,
                 const rope::ContractionRegisterTile &tile, Type element,
                 ArrayRef<int64_t> ranges);
void planWidening(RegisterTilePlan &plan,
                  const rope::ContractionRegisterTile &tile, Type element,
                  ArrayRef<int64_t> ranges);
void planBF16Pairs(RegisterTilePlan &plan, linalg::LinalgOp op,
                   const rope::ContractionRegisterTile &tile,
                   ArrayRef<int64_t> ranges);

/// Whether the payload is exactly `out + widen(a) * widen(b)` (the
/// product's operands in either order), where widen is nothing or one
/// arith.extf of a narrower float (bf16 or f16 inputs with an f32
/// accumulator) to the output type: the contraction the register tiles
/// compute.
bool isWideningMulAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul || mul->getBlock() != body)
    return false;
  int64_t extensions = 0;
  auto source = [&](Value v) -> Value {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    if (!ext || ext->getBlock() != body)
      return v;
    ++extensions;
    return ext.getIn();
  };
  Value x = source(mul.getLhs()), y = source(mul.getRhs());
  Value a = body->getArgument(0), b = body->getArgument(1);
  if (!((x == a && y == b) || (x == b && y == a)))
    return false;
  // An input not extended has the output's type; nothing else in the body.
  for (Value input : {a, b})
    if (input.getType() != element &&
        !(isa<FloatType>(input.getType()) &&
          input.getType().getIntOrFloatBitWidth() <
              element.getIntOrFloatBitWidth()))
      return false;
  return static_cast<int64_t>(body->getOperations().size()) == 3 + extensions;
}

/// Packing the vector operand costs about one shuffle per element; it pays
/// when each packed element is used by at least this many output rows.
constexpr int64_t kMinRowsToPack = 16;
/// The packed buffer stays small enough to sit in L1/L2 next to the tile it
/// serves.
constexpr int64_t kMaxPackBytes = 64 * 1024;
/// x86's cache line: a streamed row is prefetched one element per line.
constexpr int64_t kLineBytes = 64;

/// Elements of `memref`'s type per cache line.
int64_t lineElementsOf(Value memref) {
  Type stored = getElementTypeOrSelf(memref);
  return std::max<int64_t>(
      1, kLineBytes * 8 / std::max<int64_t>(8, stored.getIntOrFloatBitWidth()));
}

/// The Dot form of a payload `out + Σ_t row_t · column_t` with more than
/// two inputs: each product has one factor that is an input (a row term,
/// read along the row dim) and one computed by elementwise arith/math ops
/// from other inputs only (the column inputs, read along the column dim);
/// the one reduction dim is the unit-stride dim of every input. The row dims
/// are those only the row terms index, the column dims those only the
/// column inputs index.
FailureOr<RegisterTilePlan>
planSumOfProducts(linalg::LinalgOp op,
                  const rope::ContractionRegisterTile &tile,
                  PatternRewriter &rewriter) {
  Block *body = op.getBlock();
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  if (!element.isF32() && !element.isF64())
    return rewriter.notifyMatchFailure(op, "element type is not f32/f64");
  unsigned numInputs = op.getNumDpsInputs();
  // Inputs of the accumulator's type or a narrower float (bf16 keys and
  // queries of f32 scores), which the payload extends.
  for (OpOperand *input : op.getDpsInputOperands()) {
    Type stored = getElementTypeOrSelf(input->get());
    if (stored != element &&
        !(isa<FloatType>(stored) &&
          stored.getIntOrFloatBitWidth() < element.getIntOrFloatBitWidth()))
      return rewriter.notifyMatchFailure(op, "an input of another type");
  }
  for (OpOperand &operand : op->getOpOperands())
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return rewriter.notifyMatchFailure(op, "an operand not indexed by "
                                             "dims");
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  if (reductions.size() != 1)
    return rewriter.notifyMatchFailure(op, "needs exactly one reduction dim");
  Value acc = body->getArgument(numInputs);
  auto isInput = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == body && arg.getArgNumber() < numInputs;
  };
  auto inBody = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == body;
  };

  // The chain of additions from the yield down to `out`.
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return rewriter.notifyMatchFailure(op, "not one yielded value");
  SmallVector<std::pair<Value, Value>> terms;
  // A row factor: an input, or an input extended once (loaded widened).
  auto rowInput = [&](Value v) -> Value {
    if (isInput(v))
      return v;
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    if (ext && ext->getBlock() == body && isInput(ext.getIn()) &&
        ext->hasOneUse())
      return ext.getIn();
    return Value();
  };
  auto isProduct = [&](Value v) {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    return mul && mul->getBlock() == body &&
           (bool(rowInput(mul.getLhs())) != bool(rowInput(mul.getRhs())));
  };
  int64_t rowExtensions = 0;
  Value chain = yield.getOperand(0);
  int64_t chainOps = 0;
  while (chain != acc) {
    auto add = chain.getDefiningOp<arith::AddFOp>();
    if (!add || add->getBlock() != body)
      return rewriter.notifyMatchFailure(op, "not a sum of products onto "
                                             "the output");
    auto continues = [&](Value v) {
      return v == acc || (inBody(v) && isa<arith::AddFOp>(v.getDefiningOp()));
    };
    Value product, rest;
    if (isProduct(add.getRhs()) && continues(add.getLhs()))
      product = add.getRhs(), rest = add.getLhs();
    else if (isProduct(add.getLhs()) && continues(add.getRhs()))
      product = add.getLhs(), rest = add.getRhs();
    else
      return rewriter.notifyMatchFailure(op, "an addend is not an input "
                                             "times a computed value");
    auto mul = product.getDefiningOp<arith::MulFOp>();
    bool lhsRow = bool(rowInput(mul.getLhs()));
    Value row = lhsRow ? mul.getLhs() : mul.getRhs();
    Value column = lhsRow ? mul.getRhs() : mul.getLhs();
    if (row != rowInput(row))
      ++rowExtensions;
    terms.emplace_back(rowInput(row), column);
    chainOps += 2;
    chain = rest;
  }
  if (terms.size() < 2)
    return rewriter.notifyMatchFailure(op, "fewer than two products");
  std::reverse(terms.begin(), terms.end());

  // Every computed factor: elementwise arith/math ops of the column inputs.
  llvm::SetVector<Operation *> slice;
  llvm::SetVector<Value> columnArgs;
  SmallVector<Value> worklist;
  for (auto &term : terms)
    worklist.push_back(term.second);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (isInput(v)) {
      columnArgs.insert(v);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || def->getNumResults() != 1 ||
        !def->hasTrait<OpTrait::Elementwise>() ||
        !isa<arith::ArithDialect, math::MathDialect>(def->getDialect()) ||
        def->getNumOperands() == 0)
      return rewriter.notifyMatchFailure(op, "a computed factor is not "
                                             "elementwise arithmetic of "
                                             "inputs");
    if (slice.insert(def))
      llvm::append_range(worklist, def->getOperands());
  }
  for (auto &term : terms)
    if (columnArgs.contains(term.first))
      return rewriter.notifyMatchFailure(op, "an input is both a row term "
                                             "and a column input");
  if (static_cast<int64_t>(body->getOperations().size()) !=
      static_cast<int64_t>(slice.size()) + chainOps + rowExtensions + 1)
    return rewriter.notifyMatchFailure(op, "the payload computes more than "
                                           "the sum");

  RegisterTilePlan::SumOfProducts sum;
  auto accessOfArg = [&](Value arg) {
    return accessOf(
        op, *op.getDpsInputOperand(cast<BlockArgument>(arg).getArgNumber()));
  };
  llvm::SmallDenseSet<unsigned> rowSet, columnSet;
  auto dimsOf = [&](const OperandAccess &access,
                    llvm::SmallDenseSet<unsigned> &into) {
    for (AffineExpr e : access.map.getResults())
      into.insert(cast<AffineDimExpr>(e).getPosition());
  };
  for (auto &term : terms) {
    sum.rowTerms.push_back(accessOfArg(term.first));
    dimsOf(sum.rowTerms.back(), rowSet);
  }
  // In the inputs' order, so that the loads come out the same every time.
  SmallVector<Value> orderedArgs(columnArgs.begin(), columnArgs.end());
  llvm::sort(orderedArgs, [](Value a, Value b) {
    return cast<BlockArgument>(a).getArgNumber() <
           cast<BlockArgument>(b).getArgNumber();
  });
  for (Value arg : orderedArgs) {
    sum.columnArgs.push_back(arg);
    sum.columnInputs.push_back(accessOfArg(arg));
    dimsOf(sum.columnInputs.back(), columnSet);
  }
  for (Operation &o : body->without_terminator())
    if (slice.contains(&o))
      sum.columnOps.push_back(&o);
  for (auto &term : terms)
    sum.columnTerms.push_back(term.second);

  unsigned reduction = reductions.front();
  for (const OperandAccess &access :
       llvm::concat<const OperandAccess>(sum.rowTerms, sum.columnInputs))
    if (access.unitStrideDim != reduction)
      return rewriter.notifyMatchFailure(op, "an input not contiguous along "
                                             "the reduction");
  SmallVector<unsigned> rowDims, columnDims;
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    if (d == reduction)
      continue;
    if (rowSet.contains(d) && !columnSet.contains(d))
      rowDims.push_back(d);
    if (columnSet.contains(d) && !rowSet.contains(d))
      columnDims.push_back(d);
  }
  if (rowDims.empty() || columnDims.empty())
    return rewriter.notifyMatchFailure(op, "no row dim or no column dim");

  RegisterTilePlan plan;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  plan.form = RegisterTilePlan::Form::Dot;
  plan.output = accessOf(op, *op.getDpsInitOperand(0));
  plan.reductionDim = reduction;
  plan.rowDim = widestDim(rowDims, ranges);
  plan.colDim = widestDim(columnDims, ranges);
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d != plan.rowDim && d != plan.colDim && d != plan.reductionDim)
      plan.outerDims.push_back(d);
  plan.rowsOperand = sum.rowTerms.front();
  // The operand the prefetches follow: a column input streamed once per
  // outer index (a key half), not one the outer indices share (cos/sin).
  auto streamed = llvm::find_if(sum.columnInputs, [&](const auto &access) {
    return isIndexedByAny(access, plan.outerDims);
  });
  plan.vectorOperand =
      streamed != sum.columnInputs.end() ? *streamed : sum.columnInputs.front();
  // bf16 row terms times column factors that are bf16 values extended (a
  // rotated bf16 key, rounded as stored): multiplied in pairs, as
  // planBF16Pairs does for the plain Dot form.
  auto narrowOf = [&](Value term) -> Value {
    auto ext = term.getDefiningOp<arith::ExtFOp>();
    return ext && ext.getIn().getType().isBF16() ? ext.getIn() : Value();
  };
  int64_t extent = ranges[plan.reductionDim];
  if (tile.bf16Products == rope::BFloat16Products::Avx512Dot &&
      element.isF32() && tile.vectorBits / 32 >= 4 &&
      !ShapedType::isDynamic(extent) && extent % 8 == 0 &&
      llvm::all_of(sum.rowTerms,
                   [](const OperandAccess &access) {
                     return getElementTypeOrSelf(access.memref).isBF16();
                   }) &&
      llvm::all_of(sum.columnTerms,
                   [&](Value v) { return bool(narrowOf(v)); })) {
    plan.bf16Pairs = true;
    for (Value term : sum.columnTerms)
      sum.narrowColumnTerms.push_back(narrowOf(term));
  }
  plan.sumOfProducts = std::move(sum);
  return plan;
}

FailureOr<RegisterTilePlan>
planRegisterTile(linalg::LinalgOp op, const rope::ContractionRegisterTile &tile,
                 PatternRewriter &rewriter) {
  if (op.hasPureBufferSemantics() && op.getNumDpsInputs() > 2 &&
      op.getNumDpsInits() == 1)
    return planSumOfProducts(op, tile, rewriter);
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return rewriter.notifyMatchFailure(op, "not a mul-add contraction on "
                                           "buffers");
  Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  if (!element.isF32() && !element.isF64())
    return rewriter.notifyMatchFailure(op, "element type is not f32/f64");
  // isaContractionOpInterface lets any unary op stand between an operand
  // and the product (a negation, an exp): the tiles below compute exactly
  // acc + a·b, with the inputs at most widened.
  if (!isWideningMulAdd(op))
    return rewriter.notifyMatchFailure(op, "payload is not acc + a*b with "
                                           "the inputs at most extended");
  for (OpOperand &operand : op->getOpOperands())
    if (!op.getMatchingIndexingMap(&operand).isProjectedPermutation())
      return rewriter.notifyMatchFailure(op, "an operand not indexed by "
                                             "dims");
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.size() != 1)
    return rewriter.notifyMatchFailure(op, "needs m and n dims and exactly "
                                           "one reduction dim");

  RegisterTilePlan plan;
  OperandAccess lhs = accessOf(op, *op.getDpsInputOperand(0));
  OperandAccess rhs = accessOf(op, *op.getDpsInputOperand(1));
  plan.output = accessOf(op, *op.getDpsInitOperand(0));
  plan.reductionDim = dims->k.front();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<unsigned> outDim = plan.output.unitStrideDim;

  using Form = RegisterTilePlan::Form;
  // Outer product along the output's unit-stride dim when `vectors` (one
  // input) has it too and it is one of `vectorDims` (that input's m or n
  // dims); the rows are the other input's widest dim of `rowDims`.
  auto outerProduct =
      [&](const OperandAccess &vectors, const OperandAccess &rows,
          ArrayRef<unsigned> vectorDims, ArrayRef<unsigned> rowDims) {
        if (!outDim || vectors.unitStrideDim != outDim ||
            !llvm::is_contained(vectorDims, *outDim))
          return false;
        plan.form = Form::OuterProduct;
        plan.rowsOperand = rows;
        plan.vectorOperand = vectors;
        plan.rowDim = widestDim(rowDims, ranges);
        plan.colDim = *outDim;
        return true;
      };
  bool dot = lhs.unitStrideDim == plan.reductionDim &&
             rhs.unitStrideDim == plan.reductionDim;
  if (!outerProduct(rhs, lhs, dims->n, dims->m) &&
      !outerProduct(lhs, rhs, dims->m, dims->n)) {
    if (!dot)
      return rewriter.notifyMatchFailure(op, "no dim with unit stride in the "
                                             "output and an input, nor a "
                                             "unit-stride reduction dim");
    plan.form = Form::Dot;
    plan.rowsOperand = lhs;
    plan.vectorOperand = rhs;
    plan.rowDim = widestDim(dims->m, ranges);
    plan.colDim = widestDim(dims->n, ranges);
  }
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
    if (d != plan.rowDim && d != plan.colDim && d != plan.reductionDim)
      plan.outerDims.push_back(d);
  if (plan.form == Form::Dot && outDim && *outDim == plan.colDim)
    planPacking(plan, tile, element, ranges);
  else if (plan.form == Form::OuterProduct)
    planWidening(plan, tile, element, ranges);
  planBF16Pairs(plan, op, tile, ranges);
  return plan;
}

/// An AMX tile: 16 rows of 64 bytes (16 f32, or 16 pairs of bf16).
constexpr int64_t kAmxRows = 16;
constexpr int64_t kAmxPairs = 16;

/// The position of loop dim `dim` among `access`'s memref dims.
std::optional<unsigned> memrefDimOf(const OperandAccess &access, unsigned dim) {
  for (auto [i, expr] : llvm::enumerate(access.map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr); d && d.getPosition() == dim)
      return i;
  return std::nullopt;
}

/// Whether the packed pairs' outer product can run on AMX tiles: the
/// packed buffer holds whole tiles (columns in 16s, the reduction in 32s),
/// and the rows operand and the output are 2-D row-major where the tiles
/// read them (a tile row is one memref row along the reduction, or along
/// the columns, with unit stride; the rows dim an outer memref dim of
/// both), so that a rank-reducing view of either is what amx.tile_load
/// and amx.tile_store take, with the view's own row stride.
bool fitsAmxTiles(const RegisterTilePlan &plan) {
  if (plan.packColumns % kAmxRows != 0 ||
      plan.packReduction % (2 * kAmxPairs) != 0)
    return false;
  auto rowMajor = [&](const OperandAccess &access, unsigned inner) {
    std::optional<unsigned> row = memrefDimOf(access, plan.rowDim);
    std::optional<unsigned> line = memrefDimOf(access, inner);
    auto type = dyn_cast<MemRefType>(access.memref.getType());
    return row && line && type && *row < *line &&
           *line + 1 == static_cast<unsigned>(type.getRank()) &&
           access.unitStrideDim == inner;
  };
  return rowMajor(plan.rowsOperand, plan.reductionDim) &&
         rowMajor(plan.output, plan.colDim);
}

/// vdpbf16ps takes 4, 8 or 16 f32 lanes (AVX512-BF16 with AVX512VL).
bool isDotProductWidth(int64_t lanes) {
  return lanes == 4 || lanes == 8 || lanes == 16;
}

/// Products in pairs where the tile sizes allow them: bf16 × bf16 into f32,
/// asked for by `bf16-products`, and either the Dot form with a static
/// reduction of whole pairs of 4-lane vectors at least, or the packed outer
/// product with whole pair blocks. The plain outer product (an operand
/// contiguous along the columns, as V in P·V) would need its own pair
/// packing; it keeps the widened FMAs.
void planBF16Pairs(RegisterTilePlan &plan, linalg::LinalgOp op,
                   const rope::ContractionRegisterTile &tile,
                   ArrayRef<int64_t> ranges) {
  auto isBF16 = [](Value v) { return getElementTypeOrSelf(v).isBF16(); };
  if (tile.bf16Products == rope::BFloat16Products::Fma ||
      !getElementTypeOrSelf(op.getDpsInitOperand(0)->get()).isF32() ||
      !isBF16(op.getDpsInputOperand(0)->get()) ||
      !isBF16(op.getDpsInputOperand(1)->get()))
    return;
  int64_t lanes = tile.vectorBits / 32;
  int64_t reduction = ranges[plan.reductionDim];
  if (plan.form == RegisterTilePlan::Form::Dot)
    plan.bf16Pairs =
        lanes >= 4 && !ShapedType::isDynamic(reduction) && reduction % 8 == 0;
  else if (plan.packSource && !plan.packWidens)
    plan.bf16Pairs =
        isDotProductWidth(lanes) && plan.packReduction % (2 * lanes) == 0;
  plan.amxTiles =
      plan.bf16Pairs && tile.bf16Products == rope::BFloat16Products::Amx &&
      plan.form == RegisterTilePlan::Form::OuterProduct && fitsAmxTiles(plan);
}

/// A Dot-shaped contraction (both inputs contiguous along the reduction)
/// whose output is contiguous along the vector operand's columns becomes an
/// outer product over that operand transposed once into a buffer: no
/// horizontal reduction per output vector (a log2(lanes)-level shuffle tree
/// for every `columns` outputs), one shuffle per packed element instead.
/// Only where the packing is reused by enough rows and the extents are
/// static multiples of the lanes (whole shuffle blocks).
/// Whether a packing of the vector operand is reused by enough rows to pay
/// for itself (none: not), and whether one packing serves every outer
/// index (true) or each needs its own (false).
std::optional<bool> packingReuse(const RegisterTilePlan &plan,
                                 ArrayRef<int64_t> ranges) {
  // Outer dims of extent 1 (the batch of one attention tile) index it at 0
  // only.
  bool shared = llvm::none_of(plan.outerDims, [&](unsigned d) {
    return ranges[d] != 1 && plan.vectorOperand.map.isFunctionOfDim(d);
  });
  // Rows using each packed element: the row dim, times the outer dims the
  // packing is shared by.
  int64_t rows = ranges[plan.rowDim];
  if (shared)
    for (unsigned d : plan.outerDims)
      rows = ShapedType::isDynamic(ranges[d]) || ShapedType::isDynamic(rows)
                 ? ShapedType::kDynamic
                 : rows * ranges[d];
  if (!ShapedType::isDynamic(rows) && rows < kMinRowsToPack)
    return std::nullopt;
  return shared;
}

void planPacking(RegisterTilePlan &plan,
                 const rope::ContractionRegisterTile &tile, Type element,
                 ArrayRef<int64_t> ranges) {
  int64_t bits = element.getIntOrFloatBitWidth();
  int64_t lanes = tile.vectorBits / bits;
  int64_t reduction = ranges[plan.reductionDim], columns = ranges[plan.colDim];
  if (lanes < 2 || !llvm::isPowerOf2_64(lanes) ||
      ShapedType::isDynamic(reduction) || ShapedType::isDynamic(columns) ||
      reduction % lanes != 0 || columns % lanes != 0 ||
      reduction * columns * bits / 8 > kMaxPackBytes)
    return;
  std::optional<bool> shared = packingReuse(plan, ranges);
  if (!shared)
    return;
  plan.form = RegisterTilePlan::Form::OuterProduct;
  plan.packSource = plan.vectorOperand;
  plan.packReduction = reduction;
  plan.packColumns = columns;
  plan.packShared = *shared;
}

/// The plain outer product with a vector operand narrower than the
/// accumulator widens each of its vectors once per row tile (two integer
/// ops per vector on x86, beside `rows` FMAs): copied widened into a buffer
/// once instead, where enough rows reuse it and its extents are static
/// whole vectors.
void planWidening(RegisterTilePlan &plan,
                  const rope::ContractionRegisterTile &tile, Type element,
                  ArrayRef<int64_t> ranges) {
  Type stored = getElementTypeOrSelf(plan.vectorOperand.memref);
  int64_t bits = element.getIntOrFloatBitWidth();
  int64_t lanes = tile.vectorBits / bits;
  int64_t reduction = ranges[plan.reductionDim], columns = ranges[plan.colDim];
  if (stored == element || lanes < 2 || ShapedType::isDynamic(reduction) ||
      ShapedType::isDynamic(columns) || columns % lanes != 0 ||
      reduction * columns * bits / 8 > kMaxPackBytes)
    return;
  std::optional<bool> shared = packingReuse(plan, ranges);
  if (!shared)
    return;
  plan.packSource = plan.vectorOperand;
  plan.packReduction = reduction;
  plan.packColumns = columns;
  plan.packShared = *shared;
  // f32 rows times bf16 columns on AMX tiles: the rows split into bf16
  // parts, the columns interleaved instead of widened.
  if (tile.bf16Products == rope::BFloat16Products::Amx && element.isF32() &&
      stored.isBF16() &&
      getElementTypeOrSelf(plan.rowsOperand.memref).isF32() &&
      fitsAmxTiles(plan)) {
    plan.packInterleaves = true;
    plan.amxTiles = true;
    return;
  }
  plan.packWidens = true;
}

/// `n` consecutive elements of `memref` at `indices` (along its innermost
/// dim) as a vector of `element`: loaded in the memref's type, then
/// extended (bf16 inputs of an f32 contraction).
Value loadWidened(OpBuilder &b, Location loc, Value memref, ValueRange indices,
                  int64_t n, Type element) {
  Type stored = getElementTypeOrSelf(memref);
  Value v = vector::LoadOp::create(b, loc, VectorType::get({n}, stored), memref,
                                   indices);
  if (stored == element)
    return v;
  return arith::ExtFOp::create(b, loc, VectorType::get({n}, element), v);
}

/// One element of `memref` as `element` (see loadWidened).
Value loadScalarWidened(OpBuilder &b, Location loc, Value memref,
                        ValueRange indices, Type element) {
  Value v = memref::LoadOp::create(b, loc, memref, indices);
  if (v.getType() == element)
    return v;
  return arith::ExtFOp::create(b, loc, element, v);
}

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value addIndex(OpBuilder &b, Location loc, Value base, int64_t v) {
  if (v == 0)
    return base;
  return arith::AddIOp::create(b, loc, base, indexConstant(b, loc, v));
}

/// Covers [lo, hi) with tiles of each width of `widths` in turn (largest
/// first, the last one 1 unless hi - lo is known to be a multiple of it):
/// full tiles of one width, the rest left to the next. `body` gets the
/// tile's first index and width.
void forEachTile(
    OpBuilder &b, Location loc, Value lo, Value hi, ArrayRef<int64_t> widths,
    function_ref<void(OpBuilder &, Location, Value, int64_t)> body) {
  for (int64_t width : widths) {
    Value end = hi;
    if (width != 1) {
      // lo + (hi - lo) / width * width
      Value step = indexConstant(b, loc, width);
      Value count = arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, hi, lo), step);
      end = arith::AddIOp::create(b, loc, lo,
                                  arith::MulIOp::create(b, loc, count, step));
    }
    scf::ForOp::create(b, loc, lo, end, indexConstant(b, loc, width),
                       ValueRange{},
                       [&](OpBuilder &nb, Location nl, Value iv, ValueRange) {
                         body(nb, nl, iv, width);
                         scf::YieldOp::create(nb, nl);
                       });
    lo = end;
  }
}

/// Emits the register tiles of one contraction; `ivs` holds the loop-dim
/// values of the outer dims and is filled in for the tile dims.
class RegisterTileEmitter {
public:
  RegisterTileEmitter(const RegisterTilePlan &plan,
                      const rope::ContractionRegisterTile &tile,
                      ArrayRef<Value> ubs, Type element)
      : plan(plan), tile(tile), ubs(ubs), element(element),
        lanes(std::max<int64_t>(1, tile.vectorBits /
                                       element.getIntOrFloatBitWidth())) {}

  /// Whether the vector operand is read once, row after row, straight from
  /// the caller's memory: one row tile, not packed, the extent along its
  /// lines static. Decode's K (Dot form: rows are keys, lines along
  /// head_dim) and V (outer product: rows are keys, lines along the
  /// columns). The hardware prefetchers alone left decode's K read at about
  /// a third of the read bandwidth, as the FMAs between the loads fill the
  /// out-of-order window (docs/PERFORMANCE.md, "Decode: the streamed rows
  /// prefetched").
  bool streamsVectorOperand() const {
    if (tile.prefetchRows <= 0 || !oneRowTile() || plan.packSource)
      return false;
    unsigned along = plan.form == RegisterTilePlan::Form::Dot
                         ? plan.reductionDim
                         : plan.colDim;
    return getConstantIntValue(ubs[along]).has_value();
  }

  /// The buffer under the vector operand, for its prefetches
  /// (streamsVectorOperand).
  void setStreamBuffer(rope::PrefetchBuffer buffer) { stream = buffer; }

  /// Output columns [colLo, colHi) of every row.
  void emit(OpBuilder &b, Location loc, SmallVector<Value> ivs, Value colLo,
            Value colHi) {
    Value zero = indexConstant(b, loc, 0);
    int64_t rows = std::max<int64_t>(1, tile.rows);
    // AMX tiles first, 16 rows at a time; the rows left over as pairs.
    SmallVector<int64_t> rowWidths;
    if (plan.amxTiles)
      rowWidths.push_back(kAmxRows);
    rowWidths.push_back(rows);
    if (rows != 1)
      rowWidths.push_back(1);
    forEachTile(b, loc, zero, ubs[plan.rowDim], rowWidths,
                [&](OpBuilder &b, Location loc, Value row, int64_t rowCount) {
                  if (plan.amxTiles && rowCount == kAmxRows)
                    emitAmxRow(b, loc, ivs, row, colLo, colHi);
                  else if (plan.form == RegisterTilePlan::Form::OuterProduct)
                    emitOuterProductRow(b, loc, ivs, row, rowCount, colLo,
                                        colHi);
                  else
                    emitDotRow(b, loc, ivs, row, rowCount, colLo, colHi);
                });
  }

  /// Whether one row tile holds every row (a decode step's query group):
  /// then the vector operand is read once by that tile whatever the order.
  bool oneRowTile() const {
    std::optional<int64_t> rows = getConstantIntValue(ubs[plan.rowDim]);
    return rows && *rows <= std::max<int64_t>(1, tile.rows);
  }

  /// Vectors per row of an outer-product tile. With one row tile, as many
  /// as cover as much of a row of the output as `rowAccumulators` allow,
  /// so that the vector operand (V in decode) is streamed in few passes.
  int64_t vectorsPerRow() const {
    int64_t perRow = std::max<int64_t>(1, tile.vectorsPerRow);
    std::optional<int64_t> rows = getConstantIntValue(ubs[plan.rowDim]);
    std::optional<int64_t> columns = getConstantIntValue(ubs[plan.colDim]);
    if (!oneRowTile() || !columns || !rows || *rows < 1)
      return perRow;
    // Half of AVX-512's 32 registers, 12 of AVX2's 16: the rest hold the
    // row's vectors and the broadcasts. Every register as an accumulator
    // (4 rows x 8 vectors for a 128-wide row) made LLVM spill and rotate
    // them each key (docs/PERFORMANCE.md, "Decode: P·V in half the
    // registers").
    int64_t accumulators = tile.rowAccumulators > 0 ? tile.rowAccumulators
                           : tile.vectorBits >= 512 ? 16
                                                    : 12;
    int64_t whole = llvm::divideCeil(*columns, lanes);
    return std::max(perRow, std::min(whole, accumulators / *rows));
  }

  /// The widest column tile: blocks of columns are multiples of it, so that
  /// only the last block has a tail.
  int64_t columnTileWidth() const {
    if (plan.form == RegisterTilePlan::Form::OuterProduct)
      return lanes * vectorsPerRow();
    return std::max<int64_t>(1, tile.columns);
  }

  /// Columns per block: as many column tiles as keep the vector operand's
  /// slab (the whole reduction for those columns) within `slabBytes`; none
  /// (0) when the reduction extent is dynamic, blocking is off or one block
  /// would hold every column anyway.
  int64_t columnBlock() const {
    std::optional<int64_t> reduction =
        getConstantIntValue(ubs[plan.reductionDim]);
    // AMX tiles read the packed buffer (one key tile's K: 16 KiB for 64
    // keys of 128 bf16) whole for every 16 rows: no blocks, whose edges
    // would have to fall on whole tiles.
    if (!reduction || tile.slabBytes <= 0 || plan.amxTiles ||
        (plan.form == RegisterTilePlan::Form::OuterProduct && oneRowTile()))
      return 0;
    int64_t width = columnTileWidth();
    int64_t slabOfTile =
        *reduction * width * (element.getIntOrFloatBitWidth() / 8);
    // A sum of products: the slab is that of the column inputs every outer
    // index shares (cos and sin), read again by each.
    if (plan.sumOfProducts) {
      int64_t shared = 0;
      for (const OperandAccess &access : plan.sumOfProducts->columnInputs)
        if (!isIndexedByOuterDim(access))
          shared +=
              *reduction * width *
              (getElementTypeOrSelf(access.memref).getIntOrFloatBitWidth() / 8);
      if (shared == 0)
        return 0;
      slabOfTile = shared;
    }
    int64_t block = std::max<int64_t>(1, tile.slabBytes /
                                             std::max<int64_t>(1, slabOfTile)) *
                    width;
    std::optional<int64_t> columns = getConstantIntValue(ubs[plan.colDim]);
    if (columns && *columns <= block)
      return 0;
    return block;
  }

  /// Whether an outer dim indexes `access` (K of one KV head), or every
  /// outer index reads the same (cos/sin, a GQA group's K).
  bool isIndexedByOuterDim(const OperandAccess &access) const {
    return isIndexedByAny(access, plan.outerDims);
  }

  /// Whether every outer index reads the same column operand (a GQA group's
  /// K, or the cos/sin of keys rotated in a sum of products): then a block
  /// of columns is done for every outer index before the next block, so
  /// the slab is read from L1 by all of them.
  bool sharesColumnsAcrossOuterDims() const {
    if (!plan.sumOfProducts)
      return !isIndexedByOuterDim(plan.vectorOperand);
    return llvm::any_of(plan.sumOfProducts->columnInputs,
                        [&](const OperandAccess &access) {
                          return !isIndexedByOuterDim(access);
                        });
  }

private:
  VectorType vectorOf(int64_t n) const { return VectorType::get({n}, element); }

  /// Rows [row, row + rowCount) of the output, all columns: tiles of
  /// rowCount × (vectorsPerRow vectors), then of one vector, then of one
  /// lane.
  void emitOuterProductRow(OpBuilder &b, Location loc, SmallVector<Value> ivs,
                           Value row, int64_t rowCount, Value colLo,
                           Value colHi) {
    int64_t perRow = vectorsPerRow();
    SmallVector<int64_t> widths = {lanes * perRow};
    if (perRow != 1)
      widths.push_back(lanes);
    // Pairs are packed for whole lane blocks of columns only, and column
    // blocks are multiples of the lanes: no one-lane tail.
    if (lanes != 1 && !plan.bf16Pairs)
      widths.push_back(1);
    forEachTile(b, loc, colLo, colHi, widths,
                [&](OpBuilder &b, Location loc, Value col, int64_t width) {
                  int64_t n = std::min(width, lanes);
                  if (plan.bf16Pairs)
                    emitPairOuterProductTile(b, loc, ivs, row, rowCount, col, n,
                                             width / n);
                  else
                    emitOuterProductTile(b, loc, ivs, row, rowCount, col, n,
                                         width / n);
                });
  }

  /// Rows [row, row + 16) of the output, columns [colLo, colHi) (whole
  /// 16s), on AMX tiles: for each 16 columns, the f32 tile of the output is
  /// loaded, accumulates the products of the rows operand's 16×32 bf16
  /// tiles with the packed buffer's 16 pair rows × 16 columns, one
  /// tdpbf16ps per 32 of the reduction (unrolled: the tiles are registers,
  /// never loop-carried values), and is stored back.
  void emitAmxRow(OpBuilder &b, Location loc, SmallVector<Value> ivs, Value row,
                  Value colLo, Value colHi) {
    MLIRContext *context = b.getContext();
    auto accType = amx::TileType::get({kAmxRows, kAmxRows}, element);
    auto pairsType = amx::TileType::get({kAmxRows, 2 * kAmxPairs},
                                        BFloat16Type::get(context));
    Value zero = indexConstant(b, loc, 0);
    Value two = indexConstant(b, loc, 2);
    ivs[plan.rowDim] = row;
    // f32 rows (P of P·V): split once for every column tile.
    Value parts;
    if (plan.packInterleaves)
      parts = splitRowsIntoBF16(b, loc, ivs);
    scf::ForOp::create(
        b, loc, colLo, colHi, indexConstant(b, loc, kAmxRows), ValueRange{},
        [&](OpBuilder &b, Location loc, Value col, ValueRange) {
          ivs[plan.colDim] = col;
          Value out = amxView(b, loc, plan.output, ivs, plan.colDim, kAmxRows);
          Value acc = amx::TileLoadOp::create(b, loc, accType, out,
                                              ValueRange{zero, zero});
          Value packedColumn = arith::MulIOp::create(b, loc, col, two);
          for (int64_t k = 0; k < plan.packReduction; k += 2 * kAmxPairs) {
            Value rhs = amx::TileLoadOp::create(
                b, loc, pairsType, plan.vectorOperand.memref,
                ValueRange{indexConstant(b, loc, k / 2), packedColumn});
            if (!parts) {
              ivs[plan.reductionDim] = indexConstant(b, loc, k);
              Value rows = amxView(b, loc, plan.rowsOperand, ivs,
                                   plan.reductionDim, 2 * kAmxPairs);
              Value lhs = amx::TileLoadOp::create(b, loc, pairsType, rows,
                                                  ValueRange{zero, zero});
              acc = amx::TileMulFOp::create(b, loc, accType, lhs, rhs, acc);
              continue;
            }
            // The smallest part first.
            for (int64_t part = kSplitParts - 1; part >= 0; --part) {
              Value lhs = amx::TileLoadOp::create(
                  b, loc, pairsType, parts,
                  ValueRange{indexConstant(b, loc, part * kAmxRows),
                             indexConstant(b, loc, k)});
              acc = amx::TileMulFOp::create(b, loc, accType, lhs, rhs, acc);
            }
          }
          amx::TileStoreOp::create(b, loc, out, ValueRange{zero, zero}, acc);
          scf::YieldOp::create(b, loc);
        });
    if (parts)
      memref::DeallocOp::create(b, loc, parts);
  }

  /// An f32 is the exact sum of three bf16 (8 significand bits each): its
  /// value truncated to bf16, the rest truncated, and what is left then.
  static constexpr int64_t kSplitParts = 3;

  /// Rows [row, row + 16) of the f32 rows operand, over the whole
  /// reduction, split into a new buffer [3·16][reduction] bf16: rows
  /// 16·i + r hold part i of row r (0: the high 8 significand bits, by
  /// truncation, which cannot overflow; 1: the next 8; 2: the last 8). Each
  /// subtraction is exact, so the parts sum to the value exactly (parts
  /// below 2^-126 aside, which tdpbf16ps reads as zero). Infinities and NaN
  /// are their own high part, the others zero.
  Value splitRowsIntoBF16(OpBuilder &b, Location loc, SmallVector<Value> ivs) {
    constexpr int64_t n = kAmxRows;
    Type f32 = b.getF32Type(), i32 = b.getI32Type();
    VectorType wide = VectorType::get({n}, f32),
               bits = VectorType::get({n}, i32);
    VectorType narrow = VectorType::get({n}, b.getBF16Type());
    auto splat = [&](int64_t v) {
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(bits, b.getI32IntegerAttr(v)));
    };
    Value highHalf = splat(static_cast<int32_t>(0xFFFF0000u));
    Value exponent = splat(0x7F800000);
    Value zeros = arith::ConstantOp::create(b, loc, b.getZeroAttr(wide));
    Value parts = memref::AllocOp::create(
        b, loc,
        MemRefType::get({kSplitParts * n, plan.packReduction}, b.getBF16Type()),
        ValueRange{}, b.getI64IntegerAttr(64));
    Value row0 = ivs[plan.rowDim];
    scf::buildLoopNest(
        b, loc, ValueRange{indexConstant(b, loc, 0), indexConstant(b, loc, 0)},
        ValueRange{indexConstant(b, loc, n),
                   indexConstant(b, loc, plan.packReduction)},
        ValueRange{indexConstant(b, loc, 1), indexConstant(b, loc, n)},
        [&](OpBuilder &b, Location loc, ValueRange at) {
          Value r = at[0], k = at[1];
          ivs[plan.rowDim] = arith::AddIOp::create(b, loc, row0, r);
          ivs[plan.reductionDim] = k;
          Value x =
              vector::LoadOp::create(b, loc, wide, plan.rowsOperand.memref,
                                     plan.rowsOperand.indices(ivs));
          // Whether x is finite: its exponent is not all ones.
          Value finite = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ne,
              arith::AndIOp::create(
                  b, loc, vector::BitCastOp::create(b, loc, bits, x), exponent),
              exponent);
          auto truncated = [&](Value v) {
            return vector::BitCastOp::create(
                b, loc, wide,
                arith::AndIOp::create(
                    b, loc, vector::BitCastOp::create(b, loc, bits, v),
                    highHalf));
          };
          Value high = arith::SelectOp::create(b, loc, finite, truncated(x), x);
          Value rest = arith::SelectOp::create(
              b, loc, finite, arith::SubFOp::create(b, loc, x, high), zeros);
          Value middle = truncated(rest);
          Value low = arith::SubFOp::create(b, loc, rest, middle);
          Value split[kSplitParts] = {high, middle, low};
          for (auto [i, part] : llvm::enumerate(split))
            vector::StoreOp::create(
                b, loc, arith::TruncFOp::create(b, loc, narrow, part), parts,
                ValueRange{addIndex(b, loc, r, static_cast<int64_t>(i) * n),
                           k});
        });
    return parts;
  }

  /// The 2-D view [16][width] of `access` at `ivs` that an AMX tile reads
  /// or writes: its rows along the plan's row dim, `width` elements along
  /// `inner` (the memref's innermost dim, unit stride: fitsAmxTiles), every
  /// other dim fixed at its index.
  Value amxView(OpBuilder &b, Location loc, const OperandAccess &access,
                ArrayRef<Value> ivs, unsigned inner, int64_t width) const {
    auto type = cast<MemRefType>(access.memref.getType());
    unsigned rowAt = *memrefDimOf(access, plan.rowDim);
    unsigned innerAt = *memrefDimOf(access, inner);
    SmallVector<OpFoldResult> offsets = llvm::map_to_vector(
        access.indices(ivs), [](Value v) -> OpFoldResult { return v; });
    SmallVector<OpFoldResult> sizes(type.getRank(), b.getIndexAttr(1));
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    sizes[rowAt] = b.getIndexAttr(kAmxRows);
    sizes[innerAt] = b.getIndexAttr(width);
    auto view = memref::SubViewOp::inferRankReducedResultType(
        {kAmxRows, width}, type, offsets, sizes, strides);
    return memref::SubViewOp::create(b, loc, cast<MemRefType>(view),
                                     access.memref, offsets, sizes, strides);
  }

  /// acc[r][c] += broadcast(rows[row + r, k]) * vec[k, col + c·n .. +n]
  /// for every k, the accumulators carried in registers by the k loop.
  void emitOuterProductTile(OpBuilder &b, Location loc, SmallVector<Value> ivs,
                            Value row, int64_t rowCount, Value col, int64_t n,
                            int64_t vectors) {
    VectorType type = vectorOf(n);
    // Rows left over by the AMX tiles read the columns where they lie:
    // the interleaved packing is the tiles' layout only.
    const OperandAccess &vectorOperand =
        plan.packInterleaves ? *plan.packSource : plan.vectorOperand;
    auto at = [&](int64_t r, int64_t c, Value k, OpBuilder &b, Location loc) {
      ivs[plan.rowDim] = addIndex(b, loc, row, r);
      ivs[plan.colDim] = addIndex(b, loc, col, c * n);
      if (k)
        ivs[plan.reductionDim] = k;
      return ivs;
    };
    SmallVector<Value> init;
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t c = 0; c < vectors; ++c)
        init.push_back(vector::LoadOp::create(
            b, loc, type, plan.output.memref,
            plan.output.indices(at(r, c, nullptr, b, loc))));
    auto loop = scf::ForOp::create(
        b, loc, indexConstant(b, loc, 0), ubs[plan.reductionDim],
        indexConstant(b, loc, 1), init,
        [&](OpBuilder &b, Location loc, Value k, ValueRange acc) {
          if (stream && vectors == vectorsPerRow())
            prefetchVectorRow(b, loc, ivs, plan.reductionDim, k, plan.colDim,
                              col, vectors * n);
          SmallVector<Value> columns;
          for (int64_t c = 0; c < vectors; ++c)
            columns.push_back(loadWidened(
                b, loc, vectorOperand.memref,
                vectorOperand.indices(at(0, c, k, b, loc)), n, element));
          SmallVector<Value> next;
          for (int64_t r = 0; r < rowCount; ++r) {
            Value scalar = loadScalarWidened(
                b, loc, plan.rowsOperand.memref,
                plan.rowsOperand.indices(at(r, 0, k, b, loc)), element);
            Value splat = vector::BroadcastOp::create(b, loc, type, scalar);
            for (int64_t c = 0; c < vectors; ++c)
              next.push_back(vector::FMAOp::create(b, loc, splat, columns[c],
                                                   acc[r * vectors + c]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t c = 0; c < vectors; ++c)
        vector::StoreOp::create(b, loc, loop.getResult(r * vectors + c),
                                plan.output.memref,
                                plan.output.indices(at(r, c, nullptr, b, loc)));
  }

  /// emitOuterProductTile with products in pairs: for every pair p of the
  /// reduction, acc[r][c] = dot(acc[r][c], broadcast of the rows operand's
  /// pair (row + r, 2p..2p+1) as one 32-bit unit, packed[p][2·(col + c·n)
  /// ..]), lane i of acc summing both products of column col + c·n + i.
  void emitPairOuterProductTile(OpBuilder &b, Location loc,
                                SmallVector<Value> ivs, Value row,
                                int64_t rowCount, Value col, int64_t n,
                                int64_t vectors) {
    VectorType type = vectorOf(n);
    Type bf16 = b.getBF16Type(), i32 = b.getI32Type();
    VectorType pairs = VectorType::get({2 * n}, bf16);
    Value two = indexConstant(b, loc, 2);
    auto outputAt = [&](int64_t r, int64_t c, OpBuilder &b, Location loc) {
      ivs[plan.rowDim] = addIndex(b, loc, row, r);
      ivs[plan.colDim] = addIndex(b, loc, col, c * n);
      return plan.output.indices(ivs);
    };
    SmallVector<Value> init;
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t c = 0; c < vectors; ++c)
        init.push_back(vector::LoadOp::create(b, loc, type, plan.output.memref,
                                              outputAt(r, c, b, loc)));
    auto loop = scf::ForOp::create(
        b, loc, indexConstant(b, loc, 0),
        indexConstant(b, loc, plan.packReduction / 2), indexConstant(b, loc, 1),
        init, [&](OpBuilder &b, Location loc, Value pair, ValueRange acc) {
          SmallVector<Value> columns;
          for (int64_t c = 0; c < vectors; ++c) {
            Value column = arith::MulIOp::create(
                b, loc, addIndex(b, loc, col, c * n), two);
            columns.push_back(vector::LoadOp::create(b, loc, pairs,
                                                     plan.vectorOperand.memref,
                                                     ValueRange{pair, column}));
          }
          Value k = arith::MulIOp::create(b, loc, pair, two);
          SmallVector<Value> next;
          for (int64_t r = 0; r < rowCount; ++r) {
            ivs[plan.rowDim] = addIndex(b, loc, row, r);
            ivs[plan.reductionDim] = k;
            Value twoOfRow = vector::LoadOp::create(
                b, loc, VectorType::get({2}, bf16), plan.rowsOperand.memref,
                plan.rowsOperand.indices(ivs));
            Value unit = vector::BitCastOp::create(
                b, loc, VectorType::get({1}, i32), twoOfRow);
            Value splat = vector::BitCastOp::create(
                b, loc, pairs,
                vector::BroadcastOp::create(b, loc, VectorType::get({n}, i32),
                                            unit));
            for (int64_t c = 0; c < vectors; ++c)
              next.push_back(x86vector::DotBF16Op::create(
                  b, loc, type, acc[r * vectors + c], splat, columns[c]));
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t c = 0; c < vectors; ++c)
        vector::StoreOp::create(b, loc, loop.getResult(r * vectors + c),
                                plan.output.memref, outputAt(r, c, b, loc));
  }

  /// Rows [row, row + rowCount) of the output, all columns: tiles of
  /// rowCount × `columns` output elements, then rowCount × 1.
  void emitDotRow(OpBuilder &b, Location loc, SmallVector<Value> ivs, Value row,
                  int64_t rowCount, Value colLo, Value colHi) {
    int64_t columns = std::max<int64_t>(1, tile.columns);
    SmallVector<int64_t> widths = {columns};
    if (columns != 1)
      widths.push_back(1);
    forEachTile(b, loc, colLo, colHi, widths,
                [&](OpBuilder &b, Location loc, Value col, int64_t width) {
                  if (stream && width == columns)
                    for (int64_t c = 0; c < width; ++c)
                      for (const OperandAccess &access : streamedOperands())
                        prefetchVectorRow(
                            b, loc, ivs, access, plan.colDim,
                            addIndex(b, loc, col, c), plan.reductionDim,
                            indexConstant(b, loc, 0),
                            *getConstantIntValue(ubs[plan.reductionDim]));
                  emitDotTile(b, loc, ivs, row, rowCount, col, width);
                });
  }

  /// Prefetches the lines of the vector operand's row `rowIndex` +
  /// prefetchRows along `rowDim` (loop dims): `extent` elements from `start`
  /// along `lineDim` (unit stride), those the tile reads of a row: its
  /// columns (outer product) or the whole reduction (Dot form).
  void prefetchVectorRow(OpBuilder &b, Location loc, SmallVector<Value> ivs,
                         unsigned rowDim, Value rowIndex, unsigned lineDim,
                         Value start, int64_t extent) {
    prefetchVectorRow(b, loc, ivs, plan.vectorOperand, rowDim, rowIndex,
                      lineDim, start, extent);
  }
  /// The same for `access`, a view of the vector operand's buffer.
  void prefetchVectorRow(OpBuilder &b, Location loc, SmallVector<Value> ivs,
                         const OperandAccess &access, unsigned rowDim,
                         Value rowIndex, unsigned lineDim, Value start,
                         int64_t extent) {
    ivs[rowDim] = addIndex(b, loc, rowIndex, tile.prefetchRows);
    ivs[lineDim] = start;
    Value position =
        rope::linearPosition(b, loc, access.memref, access.indices(ivs));
    rope::prefetchRowClamped(b, loc, *stream, position, extent,
                             lineElementsOf(access.memref));
  }

  /// The operands whose rows the Dot form streams: the vector operand, or
  /// of a sum of products every column input in the vector operand's
  /// buffer that an outer dim indexes (both halves of a key, not the
  /// cos/sin the heads share).
  SmallVector<OperandAccess> streamedOperands() const {
    if (!plan.sumOfProducts)
      return {plan.vectorOperand};
    Value buffer = rope::outermostView(plan.vectorOperand.memref);
    SmallVector<OperandAccess> streamed;
    for (const OperandAccess &access : plan.sumOfProducts->columnInputs)
      if (rope::outermostView(access.memref) == buffer &&
          isIndexedByOuterDim(access))
        streamed.push_back(access);
    return streamed;
  }

  /// The reduction step: the widest vector that divides a static reduction
  /// extent (head_dim); one lane when it is dynamic.
  /// With products in pairs, the f32 lanes of the accumulator, each
  /// taking two elements per step (planBF16Pairs keeps it at least 4).
  int64_t reductionLanes() const {
    std::optional<int64_t> extent = getConstantIntValue(ubs[plan.reductionDim]);
    if (!extent)
      return 1;
    int64_t perLane = plan.bf16Pairs ? 2 : 1;
    int64_t n = lanes;
    while (n > 1 && *extent % (n * perLane) != 0)
      n /= 2;
    return n;
  }

  /// One reduction step of a sum of products: acc[r][c] += Σ_t
  /// row_t[row + r, k .. k+n] · column_t[col + c, k .. k+n], where column_t
  /// is computed from the column inputs' vectors at column c by the
  /// payload's ops (a key's rotated half, from its two halves and cos/sin:
  /// computed once per key and step, used by every row).
  SmallVector<Value> accumulateSumOfProducts(
      OpBuilder &b, Location loc, Value k, int64_t n, int64_t rowCount,
      int64_t colCount, ValueRange acc,
      function_ref<SmallVector<Value>(std::optional<int64_t>,
                                      std::optional<int64_t>)>
          at) {
    const RegisterTilePlan::SumOfProducts &sum = *plan.sumOfProducts;
    size_t terms = sum.rowTerms.size();
    // With pairs, 2n elements of the reduction per step, bf16 as stored.
    int64_t width = plan.bf16Pairs ? 2 * n : n;
    SmallVector<SmallVector<Value>> rows(terms), columns(terms);
    for (size_t t = 0; t < terms; ++t)
      for (int64_t r = 0; r < rowCount; ++r) {
        const OperandAccess &access = sum.rowTerms[t];
        SmallVector<Value> indices = access.indices(at(r, std::nullopt));
        rows[t].push_back(
            plan.bf16Pairs
                ? vector::LoadOp::create(
                      b, loc, VectorType::get({width}, b.getBF16Type()),
                      access.memref, indices)
                      .getResult()
                : loadWidened(b, loc, access.memref, indices, n, element));
      }
    for (int64_t c = 0; c < colCount; ++c) {
      // As stored: the payload's own ops extend them.
      IRMapping mapping;
      for (auto [arg, access] : llvm::zip(sum.columnArgs, sum.columnInputs))
        mapping.map(arg,
                    vector::LoadOp::create(
                        b, loc, VectorType::get({width}, arg.getType()),
                        access.memref, access.indices(at(std::nullopt, c))));
      for (Operation *op : sum.columnOps) {
        Operation *vectorOp = b.clone(*op, mapping);
        for (Value result : vectorOp->getResults())
          result.setType(VectorType::get({width}, result.getType()));
      }
      for (size_t t = 0; t < terms; ++t)
        columns[t].push_back(mapping.lookup(
            plan.bf16Pairs ? sum.narrowColumnTerms[t] : sum.columnTerms[t]));
    }
    SmallVector<Value> next(acc);
    VectorType accumulator = vectorOf(n);
    for (int64_t r = 0; r < rowCount; ++r)
      for (int64_t c = 0; c < colCount; ++c)
        for (size_t t = 0; t < terms; ++t) {
          Value &sumOf = next[r * colCount + c];
          sumOf = plan.bf16Pairs
                      ? x86vector::DotBF16Op::create(b, loc, accumulator, sumOf,
                                                     rows[t][r], columns[t][c])
                            .getResult()
                      : vector::FMAOp::create(b, loc, rows[t][r], columns[t][c],
                                              sumOf)
                            .getResult();
        }
    return next;
  }

  /// acc[r][c] += lhs[row + r, k .. k+n] * rhs[col + c, k .. k+n] for k in
  /// steps of n, then out[row + r, col + c] += reduce(acc[r][c]) once.
  void emitDotTile(OpBuilder &b, Location loc, SmallVector<Value> ivs,
                   Value row, int64_t rowCount, Value col, int64_t colCount) {
    // vdpbf16ps has at most 16 f32 lanes.
    int64_t n = plan.bf16Pairs ? std::min<int64_t>(reductionLanes(), 16)
                               : reductionLanes();
    VectorType type = vectorOf(n);
    auto at = [&](std::optional<int64_t> r, std::optional<int64_t> c, Value k,
                  OpBuilder &b, Location loc) {
      if (r)
        ivs[plan.rowDim] = addIndex(b, loc, row, *r);
      if (c)
        ivs[plan.colDim] = addIndex(b, loc, col, *c);
      if (k)
        ivs[plan.reductionDim] = k;
      return ivs;
    };
    Value zero = arith::ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getZeroAttr(element)));
    SmallVector<Value> init(rowCount * colCount, zero);
    int64_t step = plan.bf16Pairs ? 2 * n : n;
    // Pairs: both inputs as they are stored, 2n bf16 per load.
    auto load = [&](OpBuilder &b, Location loc, const OperandAccess &access,
                    SmallVector<Value> indices) -> Value {
      if (plan.bf16Pairs)
        return vector::LoadOp::create(b, loc,
                                      VectorType::get({2 * n}, b.getBF16Type()),
                                      access.memref, indices);
      return loadWidened(b, loc, access.memref, indices, n, element);
    };
    auto loop = scf::ForOp::create(
        b, loc, indexConstant(b, loc, 0), ubs[plan.reductionDim],
        indexConstant(b, loc, step), init,
        [&](OpBuilder &b, Location loc, Value k, ValueRange acc) {
          if (plan.sumOfProducts) {
            scf::YieldOp::create(
                b, loc,
                accumulateSumOfProducts(
                    b, loc, k, n, rowCount, colCount, acc,
                    [&](std::optional<int64_t> r, std::optional<int64_t> c) {
                      return at(r, c, k, b, loc);
                    }));
            return;
          }
          SmallVector<Value> lhs, rhs;
          for (int64_t r = 0; r < rowCount; ++r)
            lhs.push_back(
                load(b, loc, plan.rowsOperand,
                     plan.rowsOperand.indices(at(r, std::nullopt, k, b, loc))));
          for (int64_t c = 0; c < colCount; ++c)
            rhs.push_back(load(
                b, loc, plan.vectorOperand,
                plan.vectorOperand.indices(at(std::nullopt, c, k, b, loc))));
          SmallVector<Value> next;
          for (int64_t r = 0; r < rowCount; ++r)
            for (int64_t c = 0; c < colCount; ++c)
              next.push_back(
                  plan.bf16Pairs
                      ? x86vector::DotBF16Op::create(
                            b, loc, type, acc[r * colCount + c], lhs[r], rhs[c])
                            .getResult()
                      : vector::FMAOp::create(b, loc, lhs[r], rhs[c],
                                              acc[r * colCount + c])
                            .getResult());
          scf::YieldOp::create(b, loc, next);
        });
    SmallVector<Value> sums(loop.getResults());
    if (static_cast<int64_t>(sums.size()) == n && llvm::isPowerOf2_64(n) &&
        n > 1) {
      // As many accumulators as lanes: reduce them all at once.
      Value all = transposeReduce(b, loc, sums);
      for (int64_t r = 0; r < rowCount; ++r) {
        SmallVector<int64_t> lanesOfRow = llvm::to_vector(
            llvm::seq<int64_t>(r * colCount, (r + 1) * colCount));
        if (plan.output.unitStrideDim == plan.colDim) {
          // The row's sums are consecutive in the output: one vector
          // load/add/store.
          Value rowSums =
              vector::ShuffleOp::create(b, loc, all, all, lanesOfRow);
          SmallVector<Value> index =
              plan.output.indices(at(r, 0, nullptr, b, loc));
          Value old = vector::LoadOp::create(b, loc, rowSums.getType(),
                                             plan.output.memref, index);
          Value sum = arith::AddFOp::create(b, loc, old, rowSums);
          vector::StoreOp::create(b, loc, sum, plan.output.memref, index);
          continue;
        }
        for (int64_t c = 0; c < colCount; ++c) {
          SmallVector<Value> index =
              plan.output.indices(at(r, c, nullptr, b, loc));
          Value old = memref::LoadOp::create(b, loc, plan.output.memref, index);
          Value lane = vector::ExtractOp::create(b, loc, all, r * colCount + c);
          memref::StoreOp::create(b, loc,
                                  arith::AddFOp::create(b, loc, old, lane),
                                  plan.output.memref, index);
        }
      }
      return;
    }
    for (int64_t r = 0; r < rowCount; ++r) {
      for (int64_t c = 0; c < colCount; ++c) {
        SmallVector<Value> index =
            plan.output.indices(at(r, c, nullptr, b, loc));
        Value old = memref::LoadOp::create(b, loc, plan.output.memref, index);
        // Reassociation lets LLVM reduce as a tree instead of lane by lane.
        Value sum = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, sums[r * colCount + c], old,
            arith::FastMathFlags::reassoc);
        memref::StoreOp::create(b, loc, sum, plan.output.memref, index);
      }
    }
  }

  /// n vectors of n lanes -> one vector whose lane i is the sum of vector
  /// i: log2(n) levels; each adds the low and high halves of every segment
  /// of a pair of vectors (shuffled side by side), halving the vectors and
  /// the segment width. n - 1 adds and 2(n - 1) shuffles instead of n
  /// horizontal reductions of log2(n) steps each.
  Value transposeReduce(OpBuilder &b, Location loc,
                        SmallVector<Value> vectors) const {
    int64_t n = vectors.size();
    for (int64_t width = n; vectors.size() > 1; width /= 2) {
      int64_t segments = n / width, half = width / 2;
      SmallVector<int64_t> low, high;
      for (int64_t side = 0; side < 2; ++side)
        for (int64_t s = 0; s < segments; ++s)
          for (int64_t l = 0; l < half; ++l) {
            low.push_back(side * n + s * width + l);
            high.push_back(side * n + s * width + half + l);
          }
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < vectors.size(); i += 2) {
        Value lo =
            vector::ShuffleOp::create(b, loc, vectors[i], vectors[i + 1], low);
        Value hi =
            vector::ShuffleOp::create(b, loc, vectors[i], vectors[i + 1], high);
        next.push_back(arith::AddFOp::create(b, loc, lo, hi));
      }
      vectors = std::move(next);
    }
    return vectors.front();
  }

  const RegisterTilePlan &plan;
  const rope::ContractionRegisterTile &tile;
  ArrayRef<Value> ubs;
  Type element;
  int64_t lanes;
  std::optional<rope::PrefetchBuffer> stream;
};

/// `vectors` (n vectors of n lanes, rows of a square block) transposed:
/// log2(n) stages, each swapping one bit of the row index with the same bit
/// of the lane index between pairs of vectors (two shuffles per pair).
SmallVector<Value> transposeSquare(OpBuilder &b, Location loc,
                                   SmallVector<Value> vectors) {
  int64_t n = vectors.size();
  for (int64_t bit = 1; bit < n; bit *= 2) {
    SmallVector<int64_t> low, high;
    for (int64_t lane = 0; lane < n; ++lane) {
      // Row i (bit clear) keeps its lanes with the bit clear and takes row
      // i|bit's lanes with the bit set from their lane ^ bit; row i|bit
      // the other way round.
      low.push_back(lane & bit ? n + (lane ^ bit) : lane);
      high.push_back(lane & bit ? n + lane : lane | bit);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i & bit)
        continue;
      Value a = vectors[i], c = vectors[i | bit];
      vectors[i] = vector::ShuffleOp::create(b, loc, a, c, low);
      vectors[i | bit] = vector::ShuffleOp::create(b, loc, a, c, high);
    }
  }
  return vectors;
}

/// Fills `packed` ([reduction][columns]) with the plan's pack source
/// transposed, at the outer-dim values of `ivs`, in square blocks of
/// `lanes`.
void emitPack(OpBuilder &b, Location loc, const RegisterTilePlan &plan,
              Value packed, int64_t lanes, SmallVector<Value> ivs) {
  Type element = getElementTypeOrSelf(packed);
  Value zero = indexConstant(b, loc, 0);
  Value step = indexConstant(b, loc, lanes);
  scf::buildLoopNest(
      b, loc, ValueRange{zero, zero},
      ValueRange{indexConstant(b, loc, plan.packColumns),
                 indexConstant(b, loc, plan.packReduction)},
      ValueRange{step, step}, [&](OpBuilder &b, Location loc, ValueRange at) {
        Value column = at[0], reduction = at[1];
        SmallVector<Value> rows;
        for (int64_t i = 0; i < lanes; ++i) {
          ivs[plan.colDim] = addIndex(b, loc, column, i);
          ivs[plan.reductionDim] = reduction;
          rows.push_back(loadWidened(b, loc, plan.packSource->memref,
                                     plan.packSource->indices(ivs), lanes,
                                     element));
        }
        SmallVector<Value> columns = transposeSquare(b, loc, rows);
        for (int64_t j = 0; j < lanes; ++j)
          vector::StoreOp::create(
              b, loc, columns[j], packed,
              ValueRange{addIndex(b, loc, reduction, j), column});
      });
}

/// Fills `packed` ([reduction/2][2·columns] bf16) with the plan's pack
/// source in pairs: packed[p][2c + t] = source[c][2p + t], the layout whose
/// 2·lanes-wide rows vdpbf16ps multiplies by a broadcast pair. A pair is one
/// 32-bit unit, so this is emitPack's square transpose on i32 vectors.
void emitPackPairs(OpBuilder &b, Location loc, const RegisterTilePlan &plan,
                   Value packed, int64_t lanes, SmallVector<Value> ivs) {
  VectorType pairs = VectorType::get({2 * lanes}, b.getBF16Type());
  VectorType units = VectorType::get({lanes}, b.getI32Type());
  Value zero = indexConstant(b, loc, 0);
  Value step = indexConstant(b, loc, lanes);
  Value two = indexConstant(b, loc, 2);
  scf::buildLoopNest(
      b, loc, ValueRange{zero, zero},
      ValueRange{indexConstant(b, loc, plan.packColumns),
                 indexConstant(b, loc, plan.packReduction / 2)},
      ValueRange{step, step}, [&](OpBuilder &b, Location loc, ValueRange at) {
        Value column = at[0], pair = at[1];
        SmallVector<Value> rows;
        for (int64_t i = 0; i < lanes; ++i) {
          ivs[plan.colDim] = addIndex(b, loc, column, i);
          ivs[plan.reductionDim] = arith::MulIOp::create(b, loc, pair, two);
          Value row =
              vector::LoadOp::create(b, loc, pairs, plan.packSource->memref,
                                     plan.packSource->indices(ivs));
          rows.push_back(vector::BitCastOp::create(b, loc, units, row));
        }
        SmallVector<Value> columns = transposeSquare(b, loc, rows);
        Value packedColumn = arith::MulIOp::create(b, loc, column, two);
        for (int64_t j = 0; j < lanes; ++j)
          vector::StoreOp::create(
              b, loc, vector::BitCastOp::create(b, loc, pairs, columns[j]),
              packed, ValueRange{addIndex(b, loc, pair, j), packedColumn});
      });
}

/// Fills `packed` ([reduction/2][2·columns] bf16) with the plan's pack
/// source (bf16, unit stride along the columns: V of P·V) as interleaved
/// pairs of its reduction rows: packed[p][2c + t] = source[2p + t][c], the
/// layout of tdpbf16ps' second operand. 16 columns of two rows at a time.
void emitPackInterleaved(OpBuilder &b, Location loc,
                         const RegisterTilePlan &plan, Value packed,
                         SmallVector<Value> ivs) {
  constexpr int64_t n = kAmxPairs;
  VectorType half = VectorType::get({n}, b.getBF16Type());
  SmallVector<int64_t> interleave;
  for (int64_t i = 0; i < n; ++i)
    interleave.append({i, n + i});
  Value zero = indexConstant(b, loc, 0);
  Value two = indexConstant(b, loc, 2);
  scf::buildLoopNest(
      b, loc, ValueRange{zero, zero},
      ValueRange{indexConstant(b, loc, plan.packReduction / 2),
                 indexConstant(b, loc, plan.packColumns)},
      ValueRange{indexConstant(b, loc, 1), indexConstant(b, loc, n)},
      [&](OpBuilder &b, Location loc, ValueRange at) {
        Value pair = at[0], column = at[1];
        Value even = arith::MulIOp::create(b, loc, pair, two);
        SmallVector<Value> rows;
        for (int64_t t = 0; t < 2; ++t) {
          ivs[plan.reductionDim] = addIndex(b, loc, even, t);
          ivs[plan.colDim] = column;
          rows.push_back(vector::LoadOp::create(b, loc, half,
                                                plan.packSource->memref,
                                                plan.packSource->indices(ivs)));
        }
        Value pairs =
            vector::ShuffleOp::create(b, loc, rows[0], rows[1], interleave);
        vector::StoreOp::create(
            b, loc, pairs, packed,
            ValueRange{pair, arith::MulIOp::create(b, loc, column, two)});
      });
}

/// Fills `packed` ([reduction][columns] of the accumulator type) with the
/// plan's pack source widened, a vector of `lanes` at a time; with
/// `stream`, the source row `prefetchRows` ahead of each is prefetched
/// (decode's bf16 V, read once: RegisterTileEmitter::streamsVectorOperand).
void emitPackWidened(OpBuilder &b, Location loc, const RegisterTilePlan &plan,
                     Value packed, int64_t lanes, SmallVector<Value> ivs,
                     const std::optional<rope::PrefetchBuffer> &stream,
                     int64_t prefetchRows) {
  Type element = getElementTypeOrSelf(packed);
  Value zero = indexConstant(b, loc, 0);
  Value one = indexConstant(b, loc, 1);
  scf::ForOp::create(
      b, loc, zero, indexConstant(b, loc, plan.packReduction), one,
      ValueRange{}, [&](OpBuilder &b, Location loc, Value row, ValueRange) {
        if (stream) {
          ivs[plan.reductionDim] = addIndex(b, loc, row, prefetchRows);
          ivs[plan.colDim] = zero;
          Value start = rope::linearPosition(b, loc, plan.packSource->memref,
                                             plan.packSource->indices(ivs));
          rope::prefetchRowClamped(b, loc, *stream, start, plan.packColumns,
                                   lineElementsOf(plan.packSource->memref));
        }
        scf::ForOp::create(
            b, loc, zero, indexConstant(b, loc, plan.packColumns),
            indexConstant(b, loc, lanes), ValueRange{},
            [&](OpBuilder &b, Location loc, Value column, ValueRange) {
              ivs[plan.reductionDim] = row;
              ivs[plan.colDim] = column;
              Value v =
                  loadWidened(b, loc, plan.packSource->memref,
                              plan.packSource->indices(ivs), lanes, element);
              vector::StoreOp::create(b, loc, v, packed,
                                      ValueRange{row, column});
              scf::YieldOp::create(b, loc);
            });
        scf::YieldOp::create(b, loc);
      });
}

/// One contraction on buffers -> loops over register tiles.
struct ContractionToRegisterTiles
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  ContractionToRegisterTiles(MLIRContext *context,
                             const rope::ContractionRegisterTile &tile)
      : OpInterfaceRewritePattern(context), tile(tile) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<RegisterTilePlan> plan = planRegisterTile(op, tile, rewriter);
    if (failed(plan))
      return failure();
    Location loc = op.getLoc();

    SmallVector<Value> ubs = llvm::map_to_vector(
        op.createLoopRanges(rewriter, loc), [&](Range range) {
          return getValueOrCreateConstantIndexOp(rewriter, loc, range.size);
        });
    Type element = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
    int64_t lanes = tile.vectorBits / element.getIntOrFloatBitWidth();
    // The packed operand: [reduction][columns], read by the outer-product
    // tiles along the columns. Packed once here when every outer index
    // shares it, else per outer index (emitAt).
    auto allocatePacked = [&](OpBuilder &b, Location loc) {
      auto type = plan->bf16Pairs || plan->packInterleaves
                      ? MemRefType::get(
                            {plan->packReduction / 2, 2 * plan->packColumns},
                            b.getBF16Type())
                      : MemRefType::get(
                            {plan->packReduction, plan->packColumns}, element);
      // On the heap: a stack buffer inside loops (the query-tile forall
      // becomes an scf.for on one thread) would grow the stack per trip.
      Value packed = memref::AllocOp::create(b, loc, type, ValueRange{},
                                             b.getI64IntegerAttr(64));
      plan->vectorOperand = {
          packed,
          AffineMap::get(op.getNumLoops(), 0,
                         {b.getAffineDimExpr(plan->reductionDim),
                          b.getAffineDimExpr(plan->colDim)},
                         b.getContext()),
          plan->colDim};
      return packed;
    };
    RegisterTileEmitter emitter(*plan, tile, ubs, element);
    // A widened copy in decode reads its source once, as the tiles would
    // have: prefetched the same way.
    std::optional<rope::PrefetchBuffer> packStream;
    if (plan->packSource && plan->packWidens && tile.prefetchRows > 0 &&
        emitter.oneRowTile())
      packStream =
          rope::prefetchBufferOf(rewriter, loc, plan->packSource->memref);
    auto pack = [&](OpBuilder &b, Location loc, Value packed,
                    SmallVector<Value> ivs) {
      if (plan->bf16Pairs)
        emitPackPairs(b, loc, *plan, packed, lanes, ivs);
      else if (plan->packInterleaves)
        emitPackInterleaved(b, loc, *plan, packed, ivs);
      else if (plan->packWidens)
        emitPackWidened(b, loc, *plan, packed, lanes, ivs, packStream,
                        tile.prefetchRows);
      else
        emitPack(b, loc, *plan, packed, lanes, ivs);
    };
    Value sharedPack;
    if (plan->packSource && plan->packShared) {
      sharedPack = allocatePacked(rewriter, loc);
      // Indexed by no outer dim of extent other than 1.
      SmallVector<Value> ivs(op.getNumLoops());
      for (unsigned d : plan->outerDims)
        ivs[d] = indexConstant(rewriter, loc, 0);
      pack(rewriter, loc, sharedPack, ivs);
    }
    if (emitter.streamsVectorOperand())
      emitter.setStreamBuffer(
          rope::prefetchBufferOf(rewriter, loc, plan->vectorOperand.memref));
    int64_t block = emitter.columnBlock();
    Value zero = indexConstant(rewriter, loc, 0);
    Value columns = ubs[plan->colDim];

    // Columns [lo, hi) of every row and outer index: one block at a time
    // when blocking, so that the vector operand's slab of the block is read
    // from L1 by every row tile instead of streaming the whole operand once
    // per row tile.
    auto emitColumns = [&](OpBuilder &b, Location loc, SmallVector<Value> ivs,
                           Value lo,
                           Value hi) { emitter.emit(b, loc, ivs, lo, hi); };
    auto forEachBlock =
        [&](OpBuilder &b, Location loc,
            function_ref<void(OpBuilder &, Location, Value, Value)> body) {
          if (block == 0)
            return body(b, loc, zero, columns);
          scf::ForOp::create(
              b, loc, zero, columns, indexConstant(b, loc, block), ValueRange{},
              [&](OpBuilder &b, Location loc, Value lo, ValueRange) {
                Value hi = arith::MinUIOp::create(
                    b, loc,
                    arith::AddIOp::create(b, loc, lo,
                                          indexConstant(b, loc, block)),
                    columns);
                body(b, loc, lo, hi);
                scf::YieldOp::create(b, loc);
              });
        };
    auto emitAt = [&](OpBuilder &b, Location loc, ValueRange outer) {
      // The caller goes on after this body (a yield, in_parallel).
      OpBuilder::InsertionGuard guard(b);
      SmallVector<Value> ivs(op.getNumLoops());
      for (auto [d, iv] : llvm::zip(plan->outerDims, outer))
        ivs[d] = iv;
      // A packing per outer index: its own buffer, so that the iterations
      // of a parallel outer loop do not share one.
      Value ownPack;
      if (plan->packSource && !plan->packShared) {
        ownPack = allocatePacked(b, loc);
        pack(b, loc, ownPack, ivs);
      }
      forEachBlock(b, loc, [&](OpBuilder &b, Location loc, Value lo, Value hi) {
        emitColumns(b, loc, ivs, lo, hi);
      });
      if (ownPack)
        memref::DeallocOp::create(b, loc, ownPack);
    };
    // The outer dims (batch, heads) are independent: an scf.forall, which
    // rope-to-llvm-cpu runs on OpenMP threads with num-threads != 1. Not
    // inside a parallel loop already (a tile of rope-fuse-into-attention's
    // scf.forall), where it would only add a nested fork per tile.
    bool nested = op->getParentOfType<scf::ForallOp>() ||
                  op->getParentOfType<scf::ParallelOp>();
    if (!plan->outerDims.empty() && !nested) {
      SmallVector<OpFoldResult> outerSizes = llvm::map_to_vector(
          plan->outerDims, [&](unsigned d) -> OpFoldResult { return ubs[d]; });
      scf::ForallOp::create(rewriter, loc, outerSizes, ValueRange{},
                            std::nullopt,
                            [&](OpBuilder &b, Location loc, ValueRange ivs) {
                              emitAt(b, loc, ivs);
                              scf::InParallelOp::create(b, loc);
                            });
    } else {
      SmallVector<Value> lbs, outerUbs, steps;
      for (unsigned d : plan->outerDims) {
        lbs.push_back(indexConstant(rewriter, loc, 0));
        outerUbs.push_back(ubs[d]);
        steps.push_back(indexConstant(rewriter, loc, 1));
      }
      // A vector operand shared by every outer index (K or V of a GQA
      // group, whose query heads are an outer dim): its block's slab is
      // reused across them all before the next block.
      bool shared = emitter.sharesColumnsAcrossOuterDims();
      if (block != 0 && shared && !plan->outerDims.empty()) {
        forEachBlock(
            rewriter, loc, [&](OpBuilder &b, Location loc, Value lo, Value hi) {
              scf::buildLoopNest(
                  b, loc, lbs, outerUbs, steps,
                  [&](OpBuilder &b, Location loc, ValueRange outer) {
                    SmallVector<Value> ivs(op.getNumLoops());
                    for (auto [d, iv] : llvm::zip(plan->outerDims, outer))
                      ivs[d] = iv;
                    emitColumns(b, loc, ivs, lo, hi);
                  });
            });
      } else {
        scf::buildLoopNest(rewriter, loc, lbs, outerUbs, steps, emitAt);
      }
    }
    if (sharedPack)
      memref::DeallocOp::create(rewriter, loc, sharedPack);
    rewriter.eraseOp(op);
    return success();
  }

  rope::ContractionRegisterTile tile;
};

struct RopeVectorizeContractionsPass
    : rope::impl::RopeVectorizeContractionsPassBase<
          RopeVectorizeContractionsPass> {
  using Base::Base;
  static constexpr int64_t kMaxVectorBits = 4096;
  static constexpr int64_t kMaxTileSize = 64;
  void runOnOperation() override {
    if (vectorBits < 1 || rows < 1 || vectorsPerRow < 1 || columns < 1 ||
        slabBytes < 0 || prefetchRows < 0 || rowAccumulators < 0) {
      getOperation()->emitError("rope-vectorize-contractions: tile sizes "
                                "must be positive (slab-bytes, "
                                "prefetch-rows and row-accumulators at "
                                "least 0)");
      return signalPassFailure();
    }
    // Every accumulator of a tile is unrolled: bounds far above any register
    // file (SVE vectors have at most 2048 bits) keep the IR small and
    // lanes × vectors-per-row far from overflowing.
    if (vectorBits > kMaxVectorBits || rows > kMaxTileSize ||
        vectorsPerRow > kMaxTileSize || columns > kMaxTileSize) {
      getOperation()->emitError()
          << "rope-vectorize-contractions: vector-bits must be at most "
          << kMaxVectorBits << " and rows, vectors-per-row and columns at most "
          << kMaxTileSize;
      return signalPassFailure();
    }
    rope::ContractionRegisterTile tile;
    tile.vectorBits = vectorBits;
    tile.rows = rows;
    tile.vectorsPerRow = vectorsPerRow;
    tile.columns = columns;
    tile.slabBytes = slabBytes;
    tile.bf16Products = bf16Products;
    tile.prefetchRows = prefetchRows;
    tile.rowAccumulators = rowAccumulators;
    RewritePatternSet patterns(&getContext());
    rope::populateRopeVectorizeContractionsPatterns(patterns, tile);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeVectorizeContractionsPatterns(
    RewritePatternSet &patterns, const ContractionRegisterTile &tile) {
  patterns.add<ContractionToRegisterTiles>(patterns.getContext(), tile);
}
