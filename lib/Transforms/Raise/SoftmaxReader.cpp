//===- SoftmaxReader.cpp - A softmax read from expressions ----------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A softmax over the key atom k is read by meaning: p = e / s where s is e
// summed over k from zero, e = exp(x − m), and m is x maxed over k from its
// identity (−inf, NaN for maxnumf, or the lowest float). "Summed over k" is
// checked by renaming the reduction's own atom to k and comparing the
// summand with the numerator as expressions, so a row broadcast may be an
// op, an indexing map or a keepdim reshape, and exp(x − m) one generic or
// several named ops.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxReader.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::rope::raise;

Node *SoftmaxReader::peelRowShift(Node *x) {
  for (int i = 0; i < 2; ++i) {
    Node *shifted = computeOf<arith::SubFOp>(ex, x, 2);
    if (!shifted)
      break;
    Node *max = ex.open(shifted->operands[1]);
    std::optional<APFloat> start =
        max->kind == Node::Reduce &&
                isa<arith::MaximumFOp, arith::MaxNumFOp>(max->op)
            ? floatConstant(ex, max->operands[0])
            : std::nullopt;
    if (!start || !start->isNegInfinity() ||
        !isRowReduce(max, shifted->operands[0],
                     {arith::MaximumFOp::getOperationName(),
                      arith::MaxNumFOp::getOperationName()}))
      break;
    x = shifted->operands[0];
  }
  return x;
}

bool SoftmaxReader::readByRow(Node *reduce) const {
  AtomList keyLeaves = ex.atoms.leaves({key});
  for (const AtomList &dim : reduce->operands[0]->layout)
    for (unsigned atom : ex.atoms.leaves(dim))
      if (llvm::is_contained(keyLeaves, atom))
        return false;
  return true;
}

bool SoftmaxReader::isRowReduce(Node *row, Node *x,
                                ArrayRef<StringRef> combiners) {
  row = ex.open(row);
  if (row->kind != Node::Reduce ||
      !llvm::is_contained(combiners, row->op->getName().getStringRef()) ||
      !readByRow(row))
    return false;
  std::optional<unsigned> reduced = reducedAtom(ex, row->atoms);
  if (!reduced || ex.atoms.size(*reduced) != ex.atoms.size(key))
    return false;
  Renaming renaming;
  renaming[*reduced] = key;
  return ex.same(row->operands[1], x, renaming);
}

SoftmaxReader::Found SoftmaxReader::softmax(Node *p, Result &result) {
  Node *core = p;
  Node *guardCondition = nullptr;
  bool truncated = false;
  for (int i = 0; i < 3; ++i) {
    if (Node *trunc = computeOf<arith::TruncFOp>(ex, core, 1);
        trunc && !truncated) {
      truncated = true;
      core = trunc->operands[0];
      continue;
    }
    if (Node *select = computeOf<arith::SelectOp>(ex, core, 3);
        select && !guardCondition && isZero(ex, select->operands[1])) {
      guardCondition = select->operands[0];
      core = select->operands[2];
      continue;
    }
    break;
  }
  Node *viewed = ex.look(core);
  if (viewed->kind == Node::Tensor) {
    if (auto softmax = viewed->value.getDefiningOp<linalg::SoftmaxOp>()) {
      if (!softmax.hasPureTensorSemantics())
        return Found::No;
      int64_t dim = softmax.getDimension();
      if (dim < 0 || static_cast<size_t>(dim) >= viewed->layout.size())
        return Found::No;
      std::optional<int64_t> keyDim;
      for (auto [i, atoms] : llvm::enumerate(viewed->layout)) {
        AtomList leaves = ex.atoms.leaves(atoms);
        if (!llvm::is_contained(leaves, key))
          continue;
        if (ex.atoms.significant(atoms) != AtomList{key} &&
            leaves != AtomList{key})
          return mismatch("dim " + Twine(i) + " of the softmax flattens " +
                          over + " with other dims");
        keyDim = i;
      }
      if (keyDim != dim)
        return mismatch("the softmax is over dim " + Twine(dim) +
                        ", not over " + over +
                        (keyDim ? " (dim " + Twine(*keyDim) + ")" : ""));
      ex.opened.insert(softmax);
      result.input = ex.tensor(softmax.getInput(), viewed->layout);
      if (guardCondition && !isFullyMaskedRow(guardCondition, result.input) &&
          !isNaNOf(guardCondition, core))
        return mismatch("the select after the softmax is not the guard for "
                        "fully masked rows (all of x over the keys == "
                        "-inf)");
      result.guard = guardCondition != nullptr;
      return Found::Yes;
    }
  }
  Found written = writtenSoftmax(core, result);
  if (written != Found::Yes)
    return written;
  if (guardCondition && !isFullyMaskedRow(guardCondition, result.input) &&
      !isNaNOf(guardCondition, core))
    return mismatch("the select after the softmax is not the guard for "
                    "fully masked rows (all of x over the keys == -inf)");
  result.guard = guardCondition != nullptr;
  return Found::Yes;
}

SoftmaxReader::Found SoftmaxReader::writtenSoftmax(Node *core, Result &result) {
  Node *quotient = computeOf<arith::DivFOp>(ex, core, 2);
  if (!quotient)
    return Found::No;
  Node *numerator = quotient->operands[0];
  Node *sum = ex.open(quotient->operands[1]);
  if (sum->kind != Node::Reduce)
    return Found::No;
  if (!isa<arith::AddFOp>(sum->op) || !isZero(ex, sum->operands[0]))
    return mismatch("the divisor is not a row sum from zero");
  if (!isRowReduce(sum, numerator, {arith::AddFOp::getOperationName()}))
    return mismatch("the divisor is not the sum of the numerator over " + over);
  result.sum = sum;
  return expOfShift(numerator, result);
}

SoftmaxReader::Found SoftmaxReader::deferredSoftmax(Node *p, Node *sum,
                                                    Result &result) {
  Node *rowSum = ex.open(sum);
  if (rowSum->kind != Node::Reduce || !isa<arith::AddFOp>(rowSum->op) ||
      !isZero(ex, rowSum->operands[0]) ||
      !isRowReduce(rowSum, p, {arith::AddFOp::getOperationName()}))
    return Found::No;
  result.guard = false;
  result.sum = rowSum;
  return expOfShift(p, result);
}

SoftmaxReader::Found SoftmaxReader::expOfShift(Node *numerator,
                                               Result &result) {
  Node *exp = computeOf<math::ExpOp>(ex, numerator, 1);
  if (!exp)
    return mismatch("the numerator is not an exp");
  Node *shifted = computeOf<arith::SubFOp>(ex, exp->operands[0], 2);
  if (!shifted)
    return mismatch("the exp is not of a difference");
  Node *x = shifted->operands[0];
  Node *max = ex.open(shifted->operands[1]);
  bool isMax = max->kind == Node::Reduce &&
               isa<arith::MaximumFOp, arith::MaxNumFOp>(max->op);
  std::optional<APFloat> start =
      isMax ? floatConstant(ex, max->operands[0]) : std::nullopt;
  if (!start || !raise::isRowMaxStart(*start, isa<arith::MaxNumFOp>(max->op)))
    return mismatch("the exp is not of x minus a row max of x");
  if (!isRowReduce(max, x,
                   {arith::MaximumFOp::getOperationName(),
                    arith::MaxNumFOp::getOperationName()}))
    return mismatch("the row max is not of x over " + over);
  result.input = x;
  result.max = max;
  return Found::Yes;
}

bool SoftmaxReader::isNaNOf(Node *condition, Node *p) {
  Node *cmp = computeOf<arith::CmpFOp>(ex, condition, 2);
  if (!cmp)
    return false;
  arith::CmpFPredicate pred = cast<arith::CmpFOp>(cmp->op).getPredicate();
  if (pred != arith::CmpFPredicate::UNE && pred != arith::CmpFPredicate::UNO)
    return false;
  Renaming none;
  return ex.same(cmp->operands[0], p, none) &&
         ex.same(cmp->operands[1], p, none);
}

bool SoftmaxReader::isFullyMaskedRow(Node *condition, Node *x) {
  Node *all = ex.open(condition);
  if (all->kind != Node::Reduce || !isa<arith::AndIOp>(all->op) ||
      !readByRow(all))
    return false;
  std::optional<APInt> start = intConstant(ex, all->operands[0]);
  if (!start || start->getBitWidth() != 1 || !start->isOne())
    return false;
  std::optional<unsigned> reduced = reducedAtom(ex, all->atoms);
  if (!reduced || ex.atoms.size(*reduced) != ex.atoms.size(key))
    return false;
  Node *cmp = computeOf<arith::CmpFOp>(ex, all->operands[1], 2);
  if (!cmp ||
      cast<arith::CmpFOp>(cmp->op).getPredicate() != arith::CmpFPredicate::OEQ)
    return false;
  Renaming renaming;
  renaming[*reduced] = key;
  for (unsigned side : {0u, 1u}) {
    std::optional<APFloat> inf = floatConstant(ex, cmp->operands[1 - side]);
    if (inf && inf->isNegInfinity() &&
        ex.same(stripExtF(ex, cmp->operands[side]), x, renaming))
      return true;
  }
  return false;
}
