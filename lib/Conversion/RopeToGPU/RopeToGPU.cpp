//===- RopeToGPU.cpp - rope.apply to a GPU kernel -------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GPU lowering of `rope.apply`. RoPE is memory bound: each element of x
// is read once and written once, so the kernel's job is to keep every access
// coalesced and to spend the transcendental work once per (token, frequency),
// never per element. The op becomes a `gpu.launch` on its buffers, where each
// thread owns V consecutive pairs (V chosen so that accesses are 16 bytes):
//
//   blockDim = (TX: groups of V frequencies, TY: tokens)
//   for t = blockIdx.x * TY + ty; t < T; t += gridDim.x * TY   // grid-stride
//     for j = V tx; j < P/2; j += V TX
//       c, s = cos/sin(pos(t) * theta[j:j+V])   // f64 angle + Cody-Waite, once
//       for h in heads: rotate pairs j..j+V-1 of row (t, h)  // c, s in
//       registers
//     for ch = P + tx; ch < D; ch += TX: copy channel ch of every head
//
// Neighbouring threads handle neighbouring frequency groups, so for one head
// they touch neighbouring 16-byte pieces of a row: x[j : j+V] and
// x[P/2+j : P/2+j+V] for the half layout, the 2V channels x[2j : 2j+2V] for
// interleaved (pair-swapped in registers, with cos/sin spread over the lanes
// once per token as on the CPU). No shared memory is needed: a thread reuses
// its own cos/sin across heads, and no two threads need the same value.
//
// Why a custom lowering rather than tiling the linalg form and mapping it with
// upstream's GPU mapping: the reuse of cos/sin across heads needs the head
// loop *inside* a thread with the frequency mapped to threads, and the table
// of the linalg decomposition would be a materialized tensor (a global memory
// round trip) once tiled; scf.parallel mapping (`gpu-map-parallel-loops`)
// cannot express the grid-stride loop. Writing the launch directly keeps the
// kernel's shape explicit; everything after it (outlining, NVVM, binary) is
// upstream's.
//
// The rotation arithmetic (angle precision, magnitude, direction, type
// conversions) is the shared code of RopeArith.h, applied to scalars.
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToGPU/RopeToGPU.h"
#include "rope/Dialect/Rope/IR/RopeArith.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>
#include <limits>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOGPUPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

/// Builds the kernel of one `rope.apply`.
class RopeKernelBuilder {
public:
  RopeKernelBuilder(PatternRewriter &b, ApplyOp op,
                    const RopeToGPUOptions &options)
      : b(b), op(op), loc(op.getLoc()), options(options),
        inputType(op.getInputType()), rank(inputType.getRank()),
        headDim(op.getHeadDim()), rotaryDim(op.getRotaryDimOrDefault()),
        numPairs(rotaryDim / 2), tokenDims(op.getTokenDimsOrDefault()),
        elementType(inputType.getElementType()),
        computeType(getComputeElementType(elementType)) {
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (!llvm::is_contained(tokenDims, d))
        headDims.push_back(d);
    width = options.vectorize ? chooseWidth() : 1;
  }

  Value build();

private:
  /// Pairs per thread: as many as make each access 16 bytes (two loads of
  /// V channels for `half`, one of 2V for `interleaved`) while every access
  /// stays aligned (V divides P/2, and a row of D channels is a whole number
  /// of accesses); 1 for M-RoPE.
  int64_t chooseWidth();
  /// Loads V consecutive elements from `memref` at `indices` (a scalar load
  /// when V = 1), aligned to `align` bytes.
  Value loadLanes(OpBuilder &kb, Value memref, ValueRange indices,
                  int64_t count, int64_t align);
  void storeLanes(OpBuilder &kb, Value value, Value memref, ValueRange indices,
                  int64_t align);
  /// The alignment of V consecutive cache elements: cache rows hold P/2
  /// elements, a multiple of V, so V elements are as aligned as the buffer
  /// (assumed 16 bytes, as for x).
  int64_t cacheAlign() {
    int64_t bytes =
        cast<MemRefType>(cosCache.getType()).getElementTypeBitWidth() / 8;
    return std::min<int64_t>(width * bytes, 16);
  }
  /// The buffer of a tensor operand (read only unless it is the destination).
  Value bufferOf(Value tensor, bool readOnly);
  /// A private constant `memref.global` in the enclosing module, read by the
  /// kernel (outlining copies it into the GPU module).
  Value constantTable(OpBuilder &kb, DenseElementsAttr values, StringRef name);
  /// The product of `sizes` and their row-major delinearization.
  Value product(ArrayRef<Value> sizes);
  SmallVector<Value> delinearize(OpBuilder &kb, Value linear,
                                 ArrayRef<Value> sizes);
  /// The call's runtime length (i64) for a dynamic frequency scheme,
  /// computed inside the kernel from device buffers (the kernel is all that
  /// runs on the device): the `length` operand, else max position + 1 over
  /// the call (a loop over the positions or per-row offsets, once per
  /// thread, before the token loop), else offset + S.
  Value kernelRuntimeLength(OpBuilder &kb);
  /// The position of the token (i64); for M-RoPE the position of pair `j`.
  Value positionOf(OpBuilder &kb, ValueRange tokenIvs, Value j);
  /// (cos, sin) in the compute type of pair `j` of the token.
  std::pair<Value, Value> cosSinOf(OpBuilder &kb, ValueRange tokenIvs, Value j);
  /// The full index of channel `channel` of row (token, head).
  SmallVector<Value> rowIndex(ValueRange tokenIvs, ValueRange headIvs,
                              Value channel);
  void rotatePair(OpBuilder &kb, ValueRange tokenIvs, ValueRange headIvs,
                  Value j, Value cos, Value sin);
  /// `for h in heads: body(headIvs)`.
  void forEachHead(OpBuilder &kb,
                   function_ref<void(OpBuilder &, ValueRange)> body);

  Value index(OpBuilder &kb, int64_t v) {
    return arith::ConstantIndexOp::create(kb, loc, v);
  }

  PatternRewriter &b;
  ApplyOp op;
  Location loc;
  const RopeToGPUOptions &options;
  RankedTensorType inputType;
  int64_t rank, headDim, rotaryDim, numPairs, width = 1;
  SmallVector<int64_t> tokenDims, headDims;
  Type elementType, computeType;

  // Host-side values captured by the kernel.
  Value input, output, positions, offset, cosCache, sinCache, cacheRows;
  Value length;
  // Built in the kernel before the token loop: the frequency scheme's
  // per-call state (null for static schemes).
  Value frequencyState;
  SmallVector<Value> tokenSizes, headSizes;
  Value numHeads;
  bool inPlace = false;
};

} // namespace

int64_t RopeKernelBuilder::chooseWidth() {
  if (op.getMropeAttr())
    return 1;
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  bool half = op.getLayout() == Layout::half;
  int64_t v = std::max<int64_t>(1, (half ? 16 : 8) / bytes);
  int64_t channels = half ? 1 : 2;
  while (v > 1 && (numPairs % v != 0 || headDim % (channels * v) != 0))
    v /= 2;
  return v;
}

Value RopeKernelBuilder::loadLanes(OpBuilder &kb, Value memref,
                                   ValueRange indices, int64_t count,
                                   int64_t align) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  if (count == 1)
    return memref::LoadOp::create(kb, loc, memref, indices);
  return vector::LoadOp::create(kb, loc, VectorType::get({count}, element),
                                memref, indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(align));
}

void RopeKernelBuilder::storeLanes(OpBuilder &kb, Value value, Value memref,
                                   ValueRange indices, int64_t align) {
  if (!isa<VectorType>(value.getType())) {
    memref::StoreOp::create(kb, loc, value, memref, indices);
    return;
  }
  vector::StoreOp::create(kb, loc, value, memref, indices,
                          /*nontemporal=*/false, llvm::MaybeAlign(align));
}

Value RopeKernelBuilder::bufferOf(Value tensor, bool readOnly) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           readOnly);
}

Value RopeKernelBuilder::constantTable(OpBuilder &kb, DenseElementsAttr values,
                                       StringRef name) {
  auto module = op->getParentOfType<ModuleOp>();
  auto type = MemRefType::get(values.getType().getShape(),
                              values.getType().getElementType());
  // One global per distinct table.
  memref::GlobalOp global;
  for (auto existing : module.getOps<memref::GlobalOp>())
    if (existing.getConstant() && existing.getType() == type &&
        existing.getInitialValueAttr() == values &&
        existing.getSymName().starts_with(name))
      global = existing;
  if (!global) {
    OpBuilder detached(b.getContext());
    global = memref::GlobalOp::create(
        detached, loc, name, b.getStringAttr("private"), type, values,
        /*constant=*/true, /*alignment=*/IntegerAttr());
    SymbolTable(module).insert(global, module.getBody()->begin());
  }
  return memref::GetGlobalOp::create(kb, loc, type, global.getSymName());
}

Value RopeKernelBuilder::product(ArrayRef<Value> sizes) {
  Value result = index(b, 1);
  for (Value size : sizes)
    result = arith::MulIOp::create(b, loc, result, size);
  return result;
}

SmallVector<Value> RopeKernelBuilder::delinearize(OpBuilder &kb, Value linear,
                                                  ArrayRef<Value> sizes) {
  SmallVector<Value> ivs(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i > 0; --i) {
    ivs[i] = arith::RemUIOp::create(kb, loc, linear, sizes[i]);
    linear = arith::DivUIOp::create(kb, loc, linear, sizes[i]);
  }
  if (!sizes.empty())
    ivs[0] = linear;
  return ivs;
}

Value RopeKernelBuilder::positionOf(OpBuilder &kb, ValueRange tokenIvs,
                                    Value j) {
  if (positions) {
    if (!op.getMropeAttr())
      return toI64(kb, loc,
                   memref::LoadOp::create(kb, loc, positions, tokenIvs));
    // M-RoPE: pair j takes its position from axis t, h or w (a constant
    // table of P/2 axes).
    SmallVector<int32_t> axes =
        llvm::map_to_vector(op.getMropeAttr().getPairAxes(numPairs),
                            [](int64_t a) { return static_cast<int32_t>(a); });
    Value table =
        constantTable(kb,
                      DenseElementsAttr::get(
                          RankedTensorType::get({numPairs}, kb.getI32Type()),
                          ArrayRef<int32_t>(axes)),
                      "__rope_mrope_axes");
    Value axis = arith::IndexCastOp::create(
        kb, loc, kb.getIndexType(),
        memref::LoadOp::create(kb, loc, table, ValueRange{j}));
    SmallVector<Value> indices{axis};
    llvm::append_range(indices, tokenIvs);
    return toI64(kb, loc, memref::LoadOp::create(kb, loc, positions, indices));
  }
  Value pos = toI64(kb, loc, tokenIvs.back());
  if (!offset)
    return pos;
  Value base;
  if (!isa<MemRefType>(offset.getType()))
    base = toI64(kb, loc, offset);
  else if (cast<MemRefType>(offset.getType()).getRank() == 0)
    base = toI64(kb, loc, memref::LoadOp::create(kb, loc, offset, {}));
  else
    base = toI64(kb, loc,
                 memref::LoadOp::create(kb, loc, offset, tokenIvs.front()));
  return arith::AddIOp::create(kb, loc, base, pos);
}

Value RopeKernelBuilder::kernelRuntimeLength(OpBuilder &kb) {
  if (length)
    return toI64(kb, loc, length);
  Value seqLen = toI64(kb, loc, tokenSizes.back());
  // max over every element of `buffer` (rank >= 1), as an i64.
  auto maxElement = [&](Value buffer) -> Value {
    auto type = cast<MemRefType>(buffer.getType());
    Value lowest = arith::ConstantOp::create(
        kb, loc, kb.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
    SmallVector<Value> ivs;
    std::function<Value(OpBuilder &, int64_t, Value)> nest =
        [&](OpBuilder &lb, int64_t d, Value acc) -> Value {
      if (d == type.getRank())
        return arith::MaxSIOp::create(
            lb, loc, acc,
            toI64(lb, loc, memref::LoadOp::create(lb, loc, buffer, ivs)));
      Value upper = type.isDynamicDim(d)
                        ? memref::DimOp::create(lb, loc, buffer, d).getResult()
                        : index(lb, type.getDimSize(d));
      return scf::ForOp::create(
                 lb, loc, index(lb, 0), upper, index(lb, 1), ValueRange{acc},
                 [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
                   ivs.push_back(iv);
                   Value next = nest(fb, d + 1, args.front());
                   ivs.pop_back();
                   scf::YieldOp::create(fb, loc, next);
                 })
          .getResult(0);
    };
    return nest(kb, 0, lowest);
  };
  Value one = arith::ConstantOp::create(kb, loc, kb.getI64IntegerAttr(1));
  if (positions)
    return arith::AddIOp::create(kb, loc, maxElement(positions), one);
  if (!offset)
    return seqLen;
  Value base;
  if (!isa<MemRefType>(offset.getType()))
    base = toI64(kb, loc, offset);
  else if (cast<MemRefType>(offset.getType()).getRank() == 0)
    base = toI64(kb, loc, memref::LoadOp::create(kb, loc, offset, {}));
  else
    base = maxElement(offset);
  return arith::AddIOp::create(kb, loc, base, seqLen);
}

std::pair<Value, Value>
RopeKernelBuilder::cosSinOf(OpBuilder &kb, ValueRange tokenIvs, Value j) {
  switch (op.getCosSinSource()) {
  case ApplyOp::CosSinSource::Computed: {
    // theta of pairs [j, j + V): the scheme's per-element form, its
    // constant tables read from private globals.
    auto readTable = [&](OpBuilder &tb, Location, ArrayRef<double> thetas,
                         Value at, int64_t lanes) {
      Value table = constantTable(
          tb,
          DenseElementsAttr::get(
              RankedTensorType::get({numPairs}, tb.getF64Type()), thetas),
          "__rope_theta");
      return loadLanes(tb, table, ValueRange{at}, std::max<int64_t>(lanes, 1),
                       8);
    };
    Value theta = op.getFreqsOrDefault().buildInverseFrequencyAt(
        kb, loc, frequencyState, j, width == 1 ? 0 : width, rotaryDim,
        readTable);
    Value pos = arith::SIToFPOp::create(kb, loc, kb.getF64Type(),
                                        positionOf(kb, tokenIvs, j));
    if (width > 1)
      pos = vector::BroadcastOp::create(kb, loc, theta.getType(), pos);
    auto [c, s] = buildCosSinOfAngle(kb, loc, pos, theta, computeType);
    return applyMagnitudeAndDirection(kb, loc, op, c, s);
  }
  case ApplyOp::CosSinSource::PregatheredCache: {
    SmallVector<Value> indices(tokenIvs);
    indices.push_back(j);
    Value c = loadLanes(kb, cosCache, indices, width, cacheAlign());
    Value s = loadLanes(kb, sinCache, indices, width, cacheAlign());
    return applyMagnitudeAndDirection(kb, loc, op,
                                      convertFloat(kb, loc, c, computeType),
                                      convertFloat(kb, loc, s, computeType));
  }
  case ApplyOp::CosSinSource::GatheredCache:
    break;
  }
  // Gathered cache: a position outside [0, M) yields NaN and reads nothing
  // (as on the CPU).
  Value pos = positionOf(kb, tokenIvs, j);
  Type type =
      width == 1 ? computeType : Type(VectorType::get({width}, computeType));
  auto [c, s] = buildGatherOrNaN(
      kb, loc, pos, cacheRows, type,
      [&](OpBuilder &rb, Location rloc, Value row) -> std::pair<Value, Value> {
        return {
            convertFloat(rb, rloc,
                         loadLanes(rb, cosCache, {row, j}, width, cacheAlign()),
                         computeType),
            convertFloat(rb, rloc,
                         loadLanes(rb, sinCache, {row, j}, width, cacheAlign()),
                         computeType)};
      });
  return applyMagnitudeAndDirection(kb, loc, op, c, s);
}

SmallVector<Value> RopeKernelBuilder::rowIndex(ValueRange tokenIvs,
                                               ValueRange headIvs,
                                               Value channel) {
  SmallVector<Value> indices(rank);
  for (auto [d, iv] : llvm::zip_equal(tokenDims, tokenIvs))
    indices[d] = iv;
  for (auto [d, iv] : llvm::zip_equal(headDims, headIvs))
    indices[d] = iv;
  indices.back() = channel;
  return indices;
}

void RopeKernelBuilder::rotatePair(OpBuilder &kb, ValueRange tokenIvs,
                                   ValueRange headIvs, Value j, Value cos,
                                   Value sin) {
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  // (x1 + i x2)(c + i s): y1 = x1 c - x2 s, y2 = x2 c + x1 s.
  auto rotate = [&](Value x1, Value x2) {
    x1 = convertFloat(kb, loc, x1, computeType);
    x2 = convertFloat(kb, loc, x2, computeType);
    Value y1 =
        arith::SubFOp::create(kb, loc, arith::MulFOp::create(kb, loc, x1, cos),
                              arith::MulFOp::create(kb, loc, x2, sin));
    Value y2 = math::FmaOp::create(kb, loc, x2, cos,
                                   arith::MulFOp::create(kb, loc, x1, sin));
    return std::pair<Value, Value>(convertFloat(kb, loc, y1, elementType),
                                   convertFloat(kb, loc, y2, elementType));
  };
  if (op.getLayout() == Layout::half) {
    // V channels from each half: x[j : j + V] and x[P/2 + j : P/2 + j + V].
    Value second = arith::AddIOp::create(kb, loc, j, index(kb, numPairs));
    SmallVector<Value> at1 = rowIndex(tokenIvs, headIvs, j);
    SmallVector<Value> at2 = rowIndex(tokenIvs, headIvs, second);
    int64_t align = width * bytes;
    auto [y1, y2] = rotate(loadLanes(kb, input, at1, width, align),
                           loadLanes(kb, input, at2, width, align));
    storeLanes(kb, y1, output, at1, align);
    storeLanes(kb, y2, output, at2, align);
    return;
  }
  // Interleaved: pairs (2j, 2j + 1) ... (2j + 2V - 2, 2j + 2V - 1) are one
  // aligned vector of 2V channels (every row starts at a multiple of 2V).
  SmallVector<Value> at = rowIndex(
      tokenIvs, headIvs, arith::MulIOp::create(kb, loc, j, index(kb, 2)));
  auto rowType = VectorType::get({2 * width}, elementType);
  int64_t align = 2 * width * bytes;
  Value x = loadLanes(kb, input, at, 2 * width, align);
  if (width == 1) {
    auto [y1, y2] = rotate(vector::ExtractOp::create(kb, loc, x, 0),
                           vector::ExtractOp::create(kb, loc, x, 1));
    storeLanes(
        kb,
        vector::FromElementsOp::create(kb, loc, rowType, ValueRange{y1, y2}),
        output, at, align);
    return;
  }
  // As on the CPU: cos/sin were spread over the lanes once per token
  // ([c0, c0, c1, c1, ...], [-s0, s0, -s1, s1, ...]), so
  // y = x * c + swap(x) * s with one in-register pair swap.
  x = convertFloat(kb, loc, x, computeType);
  Value y = rotateInterleavedLanes(kb, loc, x, cos, sin);
  storeLanes(kb, convertFloat(kb, loc, y, elementType), output, at, align);
}

void RopeKernelBuilder::forEachHead(
    OpBuilder &kb, function_ref<void(OpBuilder &, ValueRange)> body) {
  scf::ForOp::create(kb, loc, index(kb, 0), numHeads, index(kb, 1),
                     ValueRange{},
                     [&](OpBuilder &hb, Location, Value h, ValueRange) {
                       body(hb, delinearize(hb, h, headSizes));
                       scf::YieldOp::create(hb, loc);
                     });
}

Value RopeKernelBuilder::build() {
  // Buffers and sizes, on the host.
  inPlace = op.getInput() == op.getInit();
  output = bufferOf(op.getInit(), /*readOnly=*/false);
  input = inPlace ? output : bufferOf(op.getInput(), /*readOnly=*/true);
  if (Value p = op.getPositions())
    positions = bufferOf(p, /*readOnly=*/true);
  if (Value o = op.getOffset())
    offset = isa<RankedTensorType>(o.getType()) ? bufferOf(o, true) : o;
  length = op.getLength();
  if (Value c = op.getCos()) {
    cosCache = bufferOf(c, /*readOnly=*/true);
    sinCache = bufferOf(op.getSin(), /*readOnly=*/true);
    if (op.getCosSinSource() == ApplyOp::CosSinSource::GatheredCache)
      cacheRows =
          toI64(b, loc, memref::DimOp::create(b, loc, cosCache, int64_t{0}));
  }
  auto sizeOf = [&](int64_t d) -> Value {
    if (!inputType.isDynamicDim(d))
      return index(b, inputType.getDimSize(d));
    return memref::DimOp::create(b, loc, input, d);
  };
  for (int64_t d : tokenDims)
    tokenSizes.push_back(sizeOf(d));
  for (int64_t d : headDims)
    headSizes.push_back(sizeOf(d));
  Value numTokens = product(tokenSizes);
  numHeads = product(headSizes);

  // Geometry: x over the frequencies (a whole number of warps), y over tokens.
  // Threads along x: one per V pairs; a warp may span several tokens.
  int64_t blockX = std::min<int64_t>(numPairs / width, options.blockSize);
  int64_t blockY = std::max<int64_t>(1, options.blockSize / blockX);
  Value one = index(b, 1);
  Value groups =
      arith::CeilDivUIOp::create(b, loc, numTokens, index(b, blockY));
  Value grid = arith::MaxUIOp::create(
      b, loc, one,
      arith::MinUIOp::create(b, loc, groups, index(b, options.maxBlocks)));
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, index(b, blockX),
                                      index(b, blockY), one);
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value stepX = index(kb, blockX), stepY = index(kb, blockY);
  Value stepJ = index(kb, blockX * width);
  Value firstJ =
      width == 1 ? tx : arith::MulIOp::create(kb, loc, tx, index(kb, width));
  Value firstToken = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, launch.getBlockIds().x, stepY),
      ty);
  Value tokenStride =
      arith::MulIOp::create(kb, loc, launch.getGridSize().x, stepY);
  if (!op.getCos()) {
    FrequencyAttrInterface freqs = op.getFreqsOrDefault();
    if (!freqs.isStatic())
      frequencyState = freqs.buildFrequencyState(
          kb, loc, kernelRuntimeLength(kb), rotaryDim);
  }
  scf::ForOp::create(
      kb, loc, firstToken, numTokens, tokenStride, ValueRange{},
      [&](OpBuilder &tb, Location, Value t, ValueRange) {
        SmallVector<Value> tokenIvs = delinearize(tb, t, tokenSizes);
        scf::ForOp::create(
            tb, loc, firstJ, index(tb, numPairs), stepJ, ValueRange{},
            [&](OpBuilder &jb, Location, Value j, ValueRange) {
              std::pair<Value, Value> cs = cosSinOf(jb, tokenIvs, j);
              if (op.getLayout() == Layout::interleaved && width > 1)
                cs = spreadForInterleavedLanes(jb, loc, cs.first, cs.second);
              forEachHead(jb, [&](OpBuilder &hb, ValueRange headIvs) {
                rotatePair(hb, tokenIvs, headIvs, j, cs.first, cs.second);
              });
              scf::YieldOp::create(jb, loc);
            });
        // Pass-through channels [P, D), unless already in place.
        if (rotaryDim < headDim && !inPlace) {
          Value first =
              arith::AddIOp::create(tb, loc, tx, index(tb, rotaryDim));
          scf::ForOp::create(
              tb, loc, first, index(tb, headDim), stepX, ValueRange{},
              [&](OpBuilder &cb, Location, Value ch, ValueRange) {
                forEachHead(cb, [&](OpBuilder &hb, ValueRange headIvs) {
                  SmallVector<Value> at = rowIndex(tokenIvs, headIvs, ch);
                  memref::StoreOp::create(
                      hb, loc, memref::LoadOp::create(hb, loc, input, at),
                      output, at);
                });
                scf::YieldOp::create(cb, loc);
              });
        }
        scf::YieldOp::create(tb, loc);
      });
  gpu::TerminatorOp::create(kb, loc);

  return bufferization::ToTensorOp::create(b, loc, op.getResult().getType(),
                                           output, /*restrict=*/true,
                                           /*writable=*/true);
}

namespace {
struct LowerRopeApplyToGPU : OpRewritePattern<ApplyOp> {
  LowerRopeApplyToGPU(MLIRContext *context, const RopeToGPUOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, RopeKernelBuilder(rewriter, op, options).build());
    return success();
  }

  RopeToGPUOptions options;
};

struct ConvertRopeToGPUPass
    : rope::impl::ConvertRopeToGPUPassBase<ConvertRopeToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 1 || maxBlocks < 1) {
      getOperation()->emitError("block-size and max-blocks must be >= 1");
      return signalPassFailure();
    }
    ConversionTarget target(getContext());
    target.addIllegalOp<ApplyOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateRopeToGPUConversionPatterns(patterns,
                                        {blockSize, maxBlocks, vectorize});
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToGPUConversionPatterns(
    RewritePatternSet &patterns, const RopeToGPUOptions &options) {
  patterns.add<LowerRopeApplyToGPU>(patterns.getContext(), options);
}
