//===- Unfuse.cpp - IR the raises read, as the frontend spelled it --------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Unfuse.h"

#include "PayloadAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Complex/IR/Complex.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::rope::raise;

namespace {
/// The loops each value of a generic's payload depends on (bit l: loop l),
/// or nullopt for values that read the destination (an accumulator).
class LoopDeps {
public:
  explicit LoopDeps(linalg::GenericOp op) : op(op) {}

  std::optional<uint64_t> of(Value v) {
    auto it = deps.find(v);
    if (it != deps.end())
      return it->second;
    std::optional<uint64_t> d = compute(v);
    deps[v] = d;
    return d;
  }

private:
  std::optional<uint64_t> compute(Value v) {
    Block *body = op.getBlock();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != body)
        return 0;
      if (arg.getArgNumber() >= op.getNumDpsInputs())
        return std::nullopt;
      uint64_t mask = 0;
      AffineMap map =
          op.getMatchingIndexingMap(op.getDpsInputOperand(arg.getArgNumber()));
      for (AffineExpr e : map.getResults())
        e.walk([&](AffineExpr inner) {
          if (auto dim = dyn_cast<AffineDimExpr>(inner))
            mask |= uint64_t(1) << dim.getPosition();
        });
      return mask;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body)
      return 0; // captured from above: the same in every iteration
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      return uint64_t(1) << index.getDim();
    uint64_t mask = 0;
    bool ok = true;
    def->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        if (operand.getDefiningOp() && def->isAncestor(operand.getDefiningOp()))
          continue;
        std::optional<uint64_t> d = of(operand);
        if (!d)
          ok = false;
        else
          mask |= *d;
      }
    });
    if (!ok)
      return std::nullopt;
    return mask;
  }

  linalg::GenericOp op;
  DenseMap<Value, std::optional<uint64_t>> deps;
};

/// Whether `v` computes something from the inputs or the loop indices: an
/// op other than a cast, constant or index, reading (through anything) a
/// block argument or a `linalg.index` (a frequency table computed from an
/// iota).
bool isSubstantial(Value v, Block *body) {
  SmallVector<Value> worklist{v};
  DenseSet<Value> seen;
  bool arithmetic = false, readsInput = false;
  while (!worklist.empty()) {
    Value x = worklist.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      readsInput |= arg.getOwner() == body;
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!def || def->getBlock() != body)
      continue;
    readsInput |= isa<linalg::IndexOp>(def);
    if (!isa<linalg::IndexOp, arith::ConstantOp, CastOpInterface>(def))
      arithmetic = true;
    for (Value operand : def->getOperands())
      worklist.push_back(operand);
  }
  return arithmetic && readsInput;
}

/// Whether `v` is an integer arange computed in the payload (loop indices,
/// constants, casts and integer adds/multiplies; no input) that is converted
/// to a float: fused into the angle generic it is the positions an
/// in-graph `arange` gave, which CosSinSources reads as a tensor.
bool isConvertedIota(Value v, Block *body) {
  if (!isa<IntegerType>(v.getType()) ||
      !llvm::all_of(v.getUsers(), [](Operation *user) {
        return isa<arith::SIToFPOp, arith::UIToFPOp>(user);
      }))
    return false;
  SmallVector<Value> worklist{v};
  DenseSet<Value> seen;
  bool index = false;
  while (!worklist.empty()) {
    Value x = worklist.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() == body)
        return false;
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!def || def->getBlock() != body)
      continue;
    if (isa<linalg::IndexOp>(def)) {
      index = true;
      continue;
    }
    if (!isa<arith::ConstantOp, arith::IndexCastOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp, arith::AddIOp, arith::MulIOp,
             arith::SubIOp>(def))
      return false;
    for (Value operand : def->getOperands())
      worklist.push_back(operand);
  }
  return index;
}

/// Materializes, for one generic, each payload value that depends on fewer
/// loops than one of its users (or than the op, when it is yielded) as a
/// generic over just those loops; the op reads it as a new input. Returns
/// the new generics (themselves candidates), or nothing when nothing is
/// materialized.
SmallVector<linalg::GenericOp> defuse(RewriterBase &rewriter,
                                      linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumLoops() > 63)
    return {};
  Block *body = op.getBlock();
  for (Operation &inner : body->without_terminator())
    if (inner.getNumRegions() != 0 || !isPure(&inner))
      return {};
  LoopDeps deps(op);
  uint64_t all = (uint64_t(1) << op.getNumLoops()) - 1;
  // Maximal values of fewer loops, in payload order.
  SetVector<Value> chosen;
  bool makesComplex =
      llvm::any_of(body->without_terminator(),
                   [](Operation &o) { return isa<complex::CreateOp>(o); });
  auto consider = [&](Value v, uint64_t userDeps, bool yielded = false,
                      bool angle = false) {
    // An arange converted to float: the integers are the tensor (what the
    // frontend's iota generic gives), the conversion stays in the op.
    if (Operation *cast = v.getDefiningOp();
        isa_and_present<arith::SIToFPOp, arith::UIToFPOp>(cast) &&
        cast->getBlock() == body && isConvertedIota(cast->getOperand(0), body))
      v = cast->getOperand(0);
    auto *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || isa<linalg::IndexOp>(def))
      return;
    std::optional<uint64_t> d = deps.of(v);
    // cos/sin computed in the op that multiplies by them are tables of
    // their own (CosSinSources reads a table's generic), even over all the
    // op's loops.
    // (Not in a payload that makes complex numbers: torch.polar's
    // complex.create(r * cos, r * sin) is read whole by CosSinSources.)
    bool trig = !yielded && !makesComplex && isa<math::CosOp, math::SinOp>(def);
    if (!d || (*d & ~userDeps) != 0 || (*d == userDeps && !trig && !angle) ||
        *d == 0)
      return;
    // Data, not addresses: an index or position computed for a
    // tensor.extract stays where the gather is (CosSinSources reads it).
    // An arange converted to float is data.
    bool iota = isConvertedIota(v, body);
    if (!iota && !isa<FloatType, ComplexType>(v.getType()))
      return;
    // A narrowing the op broadcasts or reads over more loops, possibly
    // widened again (a bf16 model's V truncated from its f32 projection,
    // fused with repeat_kv's broadcast, the transpose and SDPA's extf into
    // one copy, or into P.V itself): the narrow tensor, as the frontend had
    // it.
    Value narrowed = v;
    if (auto ext = narrowed.getDefiningOp<arith::ExtFOp>())
      narrowed = ext.getIn();
    if (auto trunc = narrowed.getDefiningOp<arith::TruncFOp>();
        !trunc || trunc->getBlock() != body)
      narrowed = Value();
    if (!iota && !narrowed && !isSubstantial(v, body))
      return;
    if (narrowed) {
      chosen.insert(narrowed);
      return;
    }
    // A widening of a payload value, possibly times constants (a bf16
    // model's rotated q extf'd to the f32 accumulator of Q.K^T, scaled there
    // by SDPA's sqrt(scale); its bf16 probabilities extf'd for P.V): the
    // narrow value is the tensor, as the frontend had it; the widening and
    // the factors stay in the op, its reader.
    for (Value x = v;;) {
      Operation *def = x.getDefiningOp();
      if (!def || def->getBlock() != body)
        break;
      if (auto ext = dyn_cast<arith::ExtFOp>(def)) {
        Operation *in = ext.getIn().getDefiningOp();
        if (!in || in->getBlock() != body || isa<linalg::IndexOp>(in) ||
            !isSubstantial(ext.getIn(), body))
          break;
        x = v = ext.getIn();
        continue;
      }
      if (!isa<arith::MulFOp, arith::DivFOp>(def))
        break;
      if (getScalarConstant(def->getOperand(1)))
        x = def->getOperand(0);
      else if (isa<arith::MulFOp>(def) && getScalarConstant(def->getOperand(0)))
        x = def->getOperand(1);
      else
        break;
    }
    chosen.insert(v);
  };
  for (Operation &inner : body->without_terminator()) {
    std::optional<uint64_t> userDeps = deps.of(inner.getResult(0));
    // The angle of torch.polar's cos/sin, computed in the generic that
    // makes the complex numbers (the angle's multiply fused into it): a
    // table of its own, as the frontend had it.
    bool angle = makesComplex && isa<math::CosOp, math::SinOp>(inner);
    for (Value operand : inner.getOperands())
      consider(operand, userDeps ? *userDeps : all, /*yielded=*/false, angle);
  }
  for (Value v : body->getTerminator()->getOperands())
    consider(v, all, /*yielded=*/true);
  // What the op still computes itself: from its yields, up to the chosen
  // values. Chosen values only others read are left to the generics of
  // those (their own turn materializes them there), and inputs only the
  // chosen values read are no longer the op's.
  SetVector<Value> reached;
  DenseSet<unsigned> argsLive;
  DenseSet<Operation *> liveOps;
  {
    SmallVector<Value> worklist(body->getTerminator()->getOperands());
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value x = worklist.pop_back_val();
      if (!seen.insert(x).second)
        continue;
      if (chosen.contains(x)) {
        reached.insert(x);
        continue;
      }
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        if (arg.getOwner() == body)
          argsLive.insert(arg.getArgNumber());
        continue;
      }
      Operation *def = x.getDefiningOp();
      if (!def || def->getBlock() != body)
        continue;
      liveOps.insert(def);
      def->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          worklist.push_back(operand);
      });
    }
  }
  chosen = SetVector<Value>(llvm::from_range,
                            llvm::make_filter_range(chosen, [&](Value v) {
                              return reached.contains(v);
                            }));
  if (chosen.empty())
    return {};

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<Range> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(rewriter, loc);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  MLIRContext *ctx = op.getContext();
  SmallVector<linalg::GenericOp> created;
  SmallVector<Value> newInputs;
  SmallVector<AffineMap> newInputMaps;
  for (Value v : chosen) {
    uint64_t mask = *deps.of(v);
    // The ops v depends on, in payload order, and the inputs they read.
    DenseSet<Operation *> slice;
    SmallVector<Value> worklist{v};
    SmallVector<unsigned> argsRead;
    while (!worklist.empty()) {
      Value x = worklist.pop_back_val();
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        if (arg.getOwner() == body &&
            !llvm::is_contained(argsRead, arg.getArgNumber()))
          argsRead.push_back(arg.getArgNumber());
        continue;
      }
      Operation *def = x.getDefiningOp();
      if (!def || def->getBlock() != body || !slice.insert(def).second)
        continue;
      for (Value operand : def->getOperands())
        worklist.push_back(operand);
    }
    llvm::sort(argsRead);
    SmallVector<int64_t> loops;
    for (unsigned l = 0; l < op.getNumLoops(); ++l)
      if (mask & (uint64_t(1) << l))
        loops.push_back(l);
    // The new generic's dims in the order of an input it reads over just
    // those loops (the projection it rotates), not in the fused op's order:
    // a rotation fused into the transpose of K (K^T for Q.K^T) is then
    // computed in K's own [.., S, D] layout, as the frontend wrote it, and
    // the op reads it transposed.
    for (unsigned a : argsRead) {
      AffineMap map = maps[a];
      SmallVector<int64_t> order;
      bool onlyDims = true;
      for (AffineExpr e : map.getResults()) {
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          order.push_back(dim.getPosition());
        else if (!isa<AffineConstantExpr>(e))
          onlyDims = false;
      }
      SmallVector<int64_t> sorted(order);
      llvm::sort(sorted);
      if (!onlyDims || sorted != loops)
        continue;
      loops = order;
      break;
    }
    SmallVector<AffineExpr> remap(op.getNumLoops(),
                                  getAffineConstantExpr(0, ctx));
    SmallVector<OpFoldResult> sizes;
    SmallVector<AffineExpr> readExprs;
    for (auto [i, l] : llvm::enumerate(loops)) {
      remap[l] = getAffineDimExpr(i, ctx);
      sizes.push_back(ranges[l].size);
      readExprs.push_back(getAffineDimExpr(l, ctx));
    }
    SmallVector<Value> inputs;
    SmallVector<AffineMap> inputMaps;
    for (unsigned a : argsRead) {
      inputs.push_back(op.getDpsInputOperand(a)->get());
      inputMaps.push_back(
          maps[a].replaceDimsAndSymbols(remap, {}, loops.size(), 0));
    }
    Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, v.getType());
    inputMaps.push_back(rewriter.getMultiDimIdentityMap(loops.size()));
    SmallVector<utils::IteratorType> parallel(loops.size(),
                                              utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty},
        inputMaps, parallel, [&](OpBuilder &b, Location l, ValueRange args) {
          IRMapping mapping;
          for (auto [i, a] : llvm::enumerate(argsRead))
            mapping.map(body->getArgument(a), args[i]);
          for (Operation &inner : body->without_terminator()) {
            if (!slice.contains(&inner))
              continue;
            if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
              int64_t pos = llvm::find(loops, index.getDim()) - loops.begin();
              mapping.map(index.getResult(),
                          linalg::IndexOp::create(b, l, pos).getResult());
              continue;
            }
            b.clone(inner, mapping);
          }
          linalg::YieldOp::create(b, l, mapping.lookup(v));
        });
    created.push_back(generic);
    newInputs.push_back(generic.getResult(0));
    newInputMaps.push_back(AffineMap::get(op.getNumLoops(), 0, readExprs, ctx));
  }

  // The op again, reading the materialized values and the inputs it still
  // reads itself.
  unsigned numInputs = op.getNumDpsInputs();
  // The loops some operand the op still reads indexes; an input the payload
  // no longer reads is kept when it is the only one indexing a loop (a
  // reduction over an unused input's dim): without it the op's loops would
  // have no range and it would not verify.
  llvm::SmallBitVector indexed(op.getNumLoops());
  auto markIndexed = [&](AffineMap map) {
    for (AffineExpr e : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        indexed.set(dim.getPosition());
  };
  for (unsigned i = 0; i < numInputs; ++i)
    if (argsLive.contains(i))
      markIndexed(maps[i]);
  for (AffineMap map : newInputMaps)
    markIndexed(map);
  for (AffineMap map : llvm::drop_begin(maps, numInputs))
    markIndexed(map);
  SmallVector<unsigned> keptInputs;
  for (unsigned i = 0; i < numInputs; ++i) {
    bool needed = argsLive.contains(i);
    for (AffineExpr e : maps[i].getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && !indexed.test(dim.getPosition()))
        needed = true;
    if (!needed)
      continue;
    keptInputs.push_back(i);
    markIndexed(maps[i]);
  }
  SmallVector<Value> inputs;
  SmallVector<AffineMap> allMaps;
  for (unsigned i : keptInputs) {
    inputs.push_back(op.getDpsInputOperand(i)->get());
    allMaps.push_back(maps[i]);
  }
  inputs.append(newInputs);
  allMaps.append(newInputMaps);
  allMaps.append(maps.begin() + numInputs, maps.end());
  unsigned numKept = keptInputs.size();
  auto replacement = linalg::GenericOp::create(
      rewriter, loc, op->getResultTypes(), inputs, op.getOutputs(), allMaps,
      iterators, [&](OpBuilder &b, Location, ValueRange args) {
        IRMapping mapping;
        for (auto [i, k] : llvm::enumerate(keptInputs))
          mapping.map(body->getArgument(k), args[i]);
        for (auto [i, v] : llvm::enumerate(chosen))
          mapping.map(v, args[numKept + i]);
        for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
          mapping.map(body->getArgument(numInputs + i),
                      args[numKept + chosen.size() + i]);
        // Ops only the materialized values read are not the op's now.
        for (Operation &inner : body->without_terminator())
          if (liveOps.contains(&inner))
            b.clone(inner, mapping);
        SmallVector<Value> yielded;
        for (Value y : body->getTerminator()->getOperands())
          yielded.push_back(mapping.lookupOrDefault(y));
        linalg::YieldOp::create(b, loc, yielded);
      });
  replacement->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, replacement->getResults());
  created.push_back(replacement);
  return created;
}
} // namespace

void mlir::rope::raise::materializeFusedOperands(Operation *root) {
  SmallVector<linalg::GenericOp> worklist;
  root->walk([&](linalg::GenericOp op) { worklist.push_back(op); });
  IRRewriter rewriter(root->getContext());
  // Each materialization makes ops of fewer loops than the one it came
  // from (and the op itself loses a value): bounded.
  int64_t budget = 100000;
  while (!worklist.empty() && budget-- > 0) {
    linalg::GenericOp op = worklist.pop_back_val();
    SmallVector<linalg::GenericOp> created = defuse(rewriter, op);
    if (created.empty())
      continue;
    // The replacement has nothing of fewer loops left; the new ones may.
    created.pop_back();
    worklist.append(created.begin(), created.end());
  }
}

void mlir::rope::raise::shareReshapeSources(Operation *root) {
  // Per source, its expand_shape users in order.
  llvm::MapVector<Value, SmallVector<tensor::ExpandShapeOp, 2>> bySource;
  root->walk([&](tensor::ExpandShapeOp op) {
    if (op.getResultType().hasStaticShape())
      bySource[op.getSrc()].push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (auto &[source, expands] : bySource) {
    if (expands.size() < 2)
      continue;
    // The base: the view with the fewest dims (the least unit dims), first
    // in the block among equals so that it dominates the others' uses.
    tensor::ExpandShapeOp base = expands.front();
    for (tensor::ExpandShapeOp op : expands)
      if (op.getResultType().getRank() < base.getResultType().getRank())
        base = op;
    for (tensor::ExpandShapeOp op : expands) {
      RankedTensorType type = op.getResultType();
      if (op == base || type.getRank() <= base.getResultType().getRank() ||
          base->getBlock() != op->getBlock() || !base->isBeforeInBlock(op))
        continue;
      // Only unit dims between the two: the other dims are the same sizes
      // in the same order (both row-major views of one source).
      if (nonUnitSizes(type.getShape()) !=
          nonUnitSizes(base.getResultType().getShape()))
        continue;
      std::optional<SmallVector<ReassociationIndices>> groups =
          getReassociationIndicesForReshape(base.getResultType(), type);
      if (!groups)
        continue;
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, base,
                                                         *groups);
    }
  }
}
