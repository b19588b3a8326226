//===- RopeToGPU.cpp - rope.apply to a GPU kernel -------------------------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GPU lowering of `rope.apply`: one gpu.launch per op whose threads own
// V consecutive pairs of a token, cos/sin once per (token, frequency) in
// registers, every head rotated with coalesced 16-byte accesses; QK-norm,
// quantized stores and the KV-cache append change the loops and stores. The
// design: docs/DESIGN.md, "The kernel, as RopeToGPU.cpp builds it".
//
//===----------------------------------------------------------------------===//

#include "rope/Conversion/RopeToGPU/RopeToGPU.h"
#include "rope/Dialect/Rope/IR/RopeOps.h"
#include "rope/Dialect/Rope/Utils/CacheSlots.h"
#include "rope/Dialect/Rope/Utils/EmptyGuard.h"
#include "rope/Dialect/Rope/Utils/RopeArith.h"
#include "rope/Dialect/Rope/Utils/RotationCore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>
#include <limits>
#include <optional>

namespace mlir::rope {
#define GEN_PASS_DEF_CONVERTROPETOGPUPASS
#include "rope/Conversion/Passes.h.inc"
} // namespace mlir::rope

using namespace mlir;
using namespace mlir::rope;

namespace {

constexpr int64_t kUnbounded = int64_t(1) << 40;

/// What the IR states about the buffer a tensor operand will have, as far
/// as the kernel's accesses care: whether its innermost stride is 1, and
/// powers of two dividing its offset and its strides (elements, from an
/// allocation the kernel assumes 16-byte aligned, as for every buffer).
struct BufferFacts {
  bool known = false;
  bool unitInnerStride = false;
  /// Whether a slice is on the way (the layout may not be the identity).
  bool sliced = false;
  int64_t offset = kUnbounded;
  SmallVector<int64_t> strides;
};

static int64_t powerOfTwoIn(int64_t v) {
  return v == 0 ? kUnbounded : std::min<int64_t>(v & -v, kUnbounded);
}

static int64_t times(int64_t a, int64_t b) {
  return a >= kUnbounded / b ? kUnbounded : a * b;
}

/// The tensor whose buffer `tensor`'s is: through the results of
/// destination-style ops (written into their init's buffer, or a new one of
/// identity layout).
static Value throughDestinations(Value tensor) {
  while (auto result = dyn_cast<OpResult>(tensor)) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
    if (!dps)
      break;
    tensor = dps.getTiedOpOperand(result)->get();
  }
  return tensor;
}

/// Whether `tensor` bufferizes to a buffer of identity layout at the start
/// of its allocation: a function argument (the pipeline's function
/// boundaries have identity layouts), a new tensor, or a to_tensor of an
/// identity-layout memref.
static bool hasIdentityBuffer(Value tensor) {
  if (auto arg = dyn_cast<BlockArgument>(tensor))
    return arg.getOwner()->isEntryBlock() &&
           isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (tensor.getDefiningOp<tensor::EmptyOp>() ||
      tensor.getDefiningOp<bufferization::AllocTensorOp>())
    return true;
  if (auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>())
    return cast<MemRefType>(toTensor.getBuffer().getType())
        .getLayout()
        .isIdentity();
  return false;
}

/// BufferFacts of `tensor`: through the results of destination-style ops
/// (written into their init's buffer, or a new identity one), slices and
/// reshapes (paged caches collapsed to [pages * page_size, ...], a slice
/// viewed [N, 1, 64]), down to a tensor with an identity buffer; unknown
/// elsewhere.
static BufferFacts factsOf(Value tensor) {
  tensor = throughDestinations(tensor);
  BufferFacts facts;
  if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>()) {
    BufferFacts source = factsOf(expand.getSrc());
    if (!source.known)
      return facts;
    facts = source;
    facts.strides.clear();
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
      // A dim split into [a, b, c]: strides [s b c, s c, s].
      SmallVector<int64_t> inner(group.size());
      int64_t stride = source.strides[d];
      for (int64_t i = static_cast<int64_t>(group.size()) - 1; i >= 0; --i) {
        inner[i] = stride;
        if (!ShapedType::isDynamic(shape[group[i]]))
          stride = times(stride, powerOfTwoIn(shape[group[i]]));
      }
      llvm::append_range(facts.strides, inner);
    }
    return facts;
  }
  if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
    BufferFacts source = factsOf(collapse.getSrc());
    if (!source.known)
      return facts;
    facts = source;
    facts.strides.clear();
    // A merged group's stride is its innermost dim's (when bufferization
    // can merge it; else the copy it makes is at least this aligned).
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      int64_t stride = kUnbounded;
      for (int64_t d : group)
        stride = std::min(stride, source.strides[d]);
      facts.strides.push_back(stride);
    }
    return facts;
  }
  auto slice = tensor.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice) {
    if (!hasIdentityBuffer(tensor))
      return facts;
    // Identity layout: stride d is the product of the sizes after d (a
    // dynamic size contributes nothing known).
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(tensor.getType()).getShape();
    facts.known = facts.unitInnerStride = true;
    facts.strides.resize(shape.size());
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      facts.strides[d] = stride;
      if (!ShapedType::isDynamic(shape[d]))
        stride = times(stride, powerOfTwoIn(shape[d]));
    }
    return facts;
  }
  BufferFacts source = factsOf(slice.getSource());
  if (!source.known)
    return facts;
  facts.known = facts.sliced = true;
  facts.offset = source.offset;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  int64_t innermost = -1;
  for (auto [d, sourceStride] : llvm::enumerate(source.strides)) {
    int64_t offset = offsets[d], stride = strides[d];
    facts.offset =
        std::min(facts.offset, ShapedType::isDynamic(offset)
                                   ? sourceStride
                                   : times(powerOfTwoIn(offset), sourceStride));
    if (dropped.test(d))
      continue;
    facts.strides.push_back(ShapedType::isDynamic(stride)
                                ? sourceStride
                                : times(powerOfTwoIn(stride), sourceStride));
    innermost = d;
  }
  int64_t rank = static_cast<int64_t>(source.strides.size());
  facts.unitInnerStride = source.unitInnerStride && innermost >= 0 &&
                          innermost == rank - 1 && strides[innermost] == 1;
  return facts;
}

/// The buffer type the kernel reads or writes `tensor` through. A tensor
/// sliced out of another with contiguous rows (MLA's rope channels [512,
/// 576) of a cache, or of a query head; or a reshape of such a slice) gets a
/// strided layout, dynamic strides and offset but the innermost stride 1, so
/// that one-shot bufferization passes the slice's subview itself (a
/// memref.cast) instead of a copy into an identity-layout buffer; everything
/// else (function arguments, whole tensors, slices of buffers the IR says
/// nothing about) the identity layout, copied by bufferization where needed.
static MemRefType kernelBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  BufferFacts facts = factsOf(tensor);
  if (!facts.known || !facts.sliced || !facts.unitInnerStride)
    return MemRefType::get(type.getShape(), type.getElementType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  return MemRefType::get(type.getShape(), type.getElementType(),
                         StridedLayoutAttr::get(tensor.getContext(),
                                                ShapedType::kDynamic, strides));
}

/// How many consecutive elements of `tensor`'s kernel buffer, from any
/// element at a multiple of that count in its innermost dim, begin at an
/// address aligned like the allocation (a power of two; kUnbounded for an
/// identity-layout buffer). A slice's buffer is aligned to the greatest
/// power of two dividing its offset and outer strides as far as the IR
/// states them (a dynamic stride is a multiple of the static sizes inside
/// it; a dynamic offset, of its dim's stride), so the kernel's 16-byte
/// accesses stay aligned in a slice at any channel offset.
static int64_t alignedElements(Value tensor) {
  if (kernelBufferType(tensor).getLayout().isIdentity())
    return kUnbounded;
  BufferFacts facts = factsOf(tensor);
  int64_t result = facts.offset;
  for (int64_t stride : ArrayRef<int64_t>(facts.strides).drop_back())
    result = std::min(result, stride);
  return result;
}

/// The buffer of a tensor operand (read only unless it is a destination),
/// of kernelBufferType.
static Value kernelBufferOf(OpBuilder &b, Location loc, Value tensor,
                            bool readOnly) {
  return bufferization::ToBufferOp::create(b, loc, kernelBufferType(tensor),
                                           tensor, readOnly);
}

/// Reads the op's operands inside the kernel, from their buffers (or the
/// captured scalar): memref.load, or a vector.load of V consecutive
/// elements (cache rows hold P/2 elements, a multiple of V, so V elements
/// are as aligned as the buffer, assumed 16 bytes as for x).
class GpuBufferReader : public RopeOperandReader {
public:
  explicit GpuBufferReader(const DenseMap<Value, Value> &buffers)
      : buffers(buffers) {}

  Value read(OpBuilder &b, Location loc, Value operand, ValueRange indices,
             int64_t lanes) override {
    Value buffer = bufferOf(operand);
    if (lanes == 0)
      return memref::LoadOp::create(b, loc, buffer, indices);
    auto type = cast<MemRefType>(buffer.getType());
    int64_t bytes = type.getElementTypeBitWidth() / 8;
    return vector::LoadOp::create(
        b, loc, VectorType::get({lanes}, type.getElementType()), buffer,
        indices, /*nontemporal=*/false,
        llvm::MaybeAlign(std::min<int64_t>(lanes * bytes, 16)));
  }

  Value dimSize(OpBuilder &b, Location loc, Value operand,
                int64_t dim) override {
    Value buffer = bufferOf(operand);
    auto type = cast<MemRefType>(buffer.getType());
    if (!type.isDynamicDim(dim))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
    return memref::DimOp::create(b, loc, buffer, dim);
  }

  /// A loop nest over the whole buffer (once per thread, before the token
  /// loop: the kernel is all that runs on the device).
  Value maxElement(OpBuilder &b, Location loc, Value operand) override {
    Value buffer = bufferOf(operand);
    auto type = cast<MemRefType>(buffer.getType());
    Value lowest = arith::ConstantOp::create(
        b, loc, b.getI64IntegerAttr(std::numeric_limits<int64_t>::min()));
    SmallVector<Value> ivs;
    std::function<Value(OpBuilder &, int64_t, Value)> nest =
        [&](OpBuilder &lb, int64_t d, Value acc) -> Value {
      if (d == type.getRank())
        return arith::MaxSIOp::create(
            lb, loc, acc,
            toI64(lb, loc, memref::LoadOp::create(lb, loc, buffer, ivs)));
      return scf::ForOp::create(
                 lb, loc, arith::ConstantIndexOp::create(lb, loc, 0),
                 dimSize(lb, loc, operand, d),
                 arith::ConstantIndexOp::create(lb, loc, 1), ValueRange{acc},
                 [&](OpBuilder &fb, Location, Value iv, ValueRange args) {
                   ivs.push_back(iv);
                   Value next = nest(fb, d + 1, args.front());
                   ivs.pop_back();
                   scf::YieldOp::create(fb, loc, next);
                 })
          .getResult(0);
    };
    return nest(b, 0, lowest);
  }

private:
  Value bufferOf(Value operand) const {
    auto it = buffers.find(operand);
    assert(it != buffers.end() && "an operand without a buffer");
    return it->second;
  }

  const DenseMap<Value, Value> &buffers;
};

/// A `gpu.launch` over tokens, the geometry of every kernel of this file:
/// blocks of `blockX` x `blockY` threads (x within a token, y over tokens)
/// on a 1-D grid of ceil(tokens / blockY) blocks, at least one and at most
/// `maxBlocks`, the tokens then walked grid-stride from `firstToken` by
/// `tokenStride`. `body` inserts into the kernel, after these values.
struct TokenLaunch {
  OpBuilder body;
  Value tx;          // threadIdx.x
  Value firstToken;  // blockIdx.x * blockY + threadIdx.y
  Value tokenStride; // gridDim.x * blockY
};

TokenLaunch launchOverTokens(OpBuilder &b, Location loc, Value numTokens,
                             int64_t blockX, int64_t blockY,
                             int64_t maxBlocks) {
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  Value one = index(b, 1);
  Value groups =
      arith::CeilDivUIOp::create(b, loc, numTokens, index(b, blockY));
  Value grid = arith::MaxUIOp::create(
      b, loc, one, arith::MinUIOp::create(b, loc, groups, index(b, maxBlocks)));
  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, index(b, blockX),
                                      index(b, blockY), one);
  OpBuilder kb = OpBuilder::atBlockBegin(&launch.getBody().front());
  Value stepY = index(kb, blockY);
  Value firstToken = arith::AddIOp::create(
      kb, loc, arith::MulIOp::create(kb, loc, launch.getBlockIds().x, stepY),
      launch.getThreadIds().y);
  Value tokenStride =
      arith::MulIOp::create(kb, loc, launch.getGridSize().x, stepY);
  return {kb, launch.getThreadIds().x, firstToken, tokenStride};
}

/// An input without a head launches nothing (EmptyGuard.h): where a head
/// dim is dynamic, the launch goes under `scf.if (numHeads != 0)` on the
/// host, with `b` left inside it; the buffers and the result tensor stay
/// outside, so bufferization still writes the destination in place. Null
/// (and `b` unchanged) when every head dim is static.
scf::IfOp guardLaunch(OpBuilder &b, Location loc, RankedTensorType inputType,
                      ArrayRef<int64_t> headDims, Value numHeads) {
  if (llvm::none_of(headDims,
                    [&](int64_t d) { return inputType.isDynamicDim(d); }))
    return nullptr;
  Value work = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, numHeads,
                                     arith::ConstantIndexOp::create(b, loc, 0));
  auto guard = scf::IfOp::create(b, loc, work, /*withElseRegion=*/false);
  b.setInsertionPoint(guard.thenBlock()->getTerminator());
  return guard;
}

/// What the fused neighbours need to rotate one group of pairs of one row
/// (each null when the op has no such neighbour): QK-norm's factor of the
/// row and the group's norm weights (half layout: the two halves' lanes;
/// interleaved: the 2V channels in `weight1`), the quantization scale of
/// the row.
struct GroupNeighbours {
  Value factor, weight1, weight2, scale;
};

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
        computeType(getComputeElementType(elementType)),
        storageType(op.getStorageElementType()) {
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
  /// The buffer of a tensor operand (read only unless it is the destination).
  Value bufferOf(Value tensor, bool readOnly);
  /// A private constant `memref.global` in the enclosing module, read by the
  /// kernel (outlining copies it into the GPU module).
  Value constantTable(OpBuilder &kb, DenseElementsAttr values, StringRef name);
  /// The product of `sizes` and their row-major delinearization.
  Value product(ArrayRef<Value> sizes);
  SmallVector<Value> delinearize(OpBuilder &kb, Value linear,
                                 ArrayRef<Value> sizes);
  /// theta of pairs [j, j + V) (f64, scalar when V = 1): the scheme's
  /// per-element form, its constant tables read from private globals.
  Value thetaOf(OpBuilder &kb, Value j);
  /// How the angle is formed (the pattern checked that the requested
  /// method applies: angleMethodFor).
  AngleMethod angleMethod() {
    FailureOr<AngleMethod> method = angleMethodFor(op, options.angle);
    return succeeded(method) ? *method : AngleMethod::F64;
  }
  /// The full index of channel `channel` of row (token, head).
  SmallVector<Value> rowIndex(ValueRange tokenIvs, ValueRange headIvs,
                              Value channel);
  /// Where channel `channel` of row (token, head) is stored: rowIndex, or
  /// with slots the token's cache row (slotIvs).
  SmallVector<Value> storeIndex(ValueRange tokenIvs, ValueRange headIvs,
                                Value channel);
  void rotatePair(OpBuilder &kb, ValueRange tokenIvs, ValueRange headIvs,
                  Value j, Value cos, Value sin,
                  const GroupNeighbours &neighbours);
  /// `for h in heads: body(headIvs)`.
  void forEachHead(OpBuilder &kb,
                   function_ref<void(OpBuilder &, ValueRange)> body);
  /// The quantization scale of the row of head `headIvs` (f32; null without
  /// quant_scale).
  Value scaleOf(OpBuilder &kb, ValueRange headIvs);
  /// `x` (a channel or lanes of the input, any float type) as it enters the
  /// rotation: in the compute type, normalized when `factor` is set.
  Value normalized(OpBuilder &kb, Value x, Value factor, Value weight);
  /// QK-norm's factor of row (token, head): its sum of squares over the D
  /// channels, read in accesses of `lanes` channels.
  Value rowNormFactor(OpBuilder &kb, ValueRange tokenIvs, ValueRange headIvs);
  /// The norm weights of channels [channel, channel + count) (count 1: a
  /// scalar).
  Value weightLanes(OpBuilder &kb, Value channel, int64_t count);
  /// The token loop's body without QK-norm: cos/sin per frequency group,
  /// rotated in every head; then the pass-through channels.
  void buildTokenBody(OpBuilder &tb, ValueRange tokenIvs, Value tx,
                      Value firstJ);
  /// The token loop's body with QK-norm (the reordered loops of the file
  /// comment).
  void buildNormTokenBody(OpBuilder &tb, ValueRange tokenIvs, Value tx,
                          Value firstJ);

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
  Type elementType, computeType, storageType;

  // Host-side values captured by the kernel.
  Value input, output;
  // The neighbours' buffers (null when absent) and, in the kernel, a
  // per-tensor scale (loaded once per thread).
  Value normWeight, quantScale, tensorScale;
  int64_t blockX = 1;
  // The buffers of the op's tensor operands, read by the kernel.
  DenseMap<Value, Value> buffers;
  // Built in the kernel before the token loop: the frequency scheme's
  // per-call state (null for static schemes).
  Value frequencyState;
  std::optional<RotationCore> core;
  std::optional<GpuBufferReader> reader;
  SmallVector<Value> tokenSizes, headSizes;
  Value numHeads;
  bool inPlace = false;
  // KV-cache append: the slots' buffer, the cache's token sizes (host) and,
  // while the body of a token is built, the cache coordinates of its slot.
  Value slotsBuffer;
  SmallVector<Value> cacheTokenSizes, slotIvs;
};

} // namespace

int64_t RopeKernelBuilder::chooseWidth() {
  if (op.getMropeAttr())
    return 1;
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  bool half = op.getLayout() == Layout::half;
  int64_t v = std::max<int64_t>(1, (half ? 16 : 8) / bytes);
  int64_t channels = half ? 1 : 2;
  // Buffers sliced out of others (kernelBufferType) keep every access as
  // aligned as it claims to be.
  int64_t aligned = kUnbounded;
  for (Value operand :
       SmallVector<Value>{op.getInput(), op.getInit(), op.getCos(), op.getSin(),
                          op.getNormWeight()})
    if (operand)
      aligned = std::min(aligned, alignedElements(operand));
  while (v > 1 && (numPairs % v != 0 || headDim % (channels * v) != 0 ||
                   aligned % (channels * v) != 0))
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
  return kernelBufferOf(b, loc, tensor, readOnly);
}

Value RopeKernelBuilder::constantTable(OpBuilder &kb, DenseElementsAttr values,
                                       StringRef name) {
  // The pass runs on modules; the op's module holds the globals.
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
    // Created through the rewriter (the conversion driver sees it), under a
    // name no symbol of the module has.
    SymbolTable symbols(module);
    std::string symbol = name.str();
    for (unsigned suffix = 0; symbols.lookup(symbol); ++suffix)
      symbol = (name + "_" + Twine(suffix)).str();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = memref::GlobalOp::create(
        b, loc, symbol, b.getStringAttr("private"), type, values,
        /*constant=*/true, /*alignment=*/IntegerAttr());
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

Value RopeKernelBuilder::thetaOf(OpBuilder &kb, Value j) {
  // A read of one constant global per table: the f64 thetas, or with
  // angle=turns (the pattern checked that it applies) their i64 phase steps.
  AngleMethod angle = angleMethod();
  auto read = frequencyTableReader(angle, [&](OpBuilder &tb, Location,
                                              DenseElementsAttr table, Value at,
                                              int64_t n) {
    Value global =
        constantTable(tb, table,
                      table.getElementType().isInteger(64) ? "__rope_phase_step"
                                                           : "__rope_theta");
    return loadLanes(tb, global, ValueRange{at}, std::max<int64_t>(n, 1), 8);
  });
  return buildFrequencyAt(kb, loc, op.getFreqsOrDefault(), angle,
                          frequencyState, j, width == 1 ? 0 : width, rotaryDim,
                          read);
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

SmallVector<Value> RopeKernelBuilder::storeIndex(ValueRange tokenIvs,
                                                 ValueRange headIvs,
                                                 Value channel) {
  return rowIndex(slotsBuffer ? ValueRange(slotIvs) : tokenIvs, headIvs,
                  channel);
}

void RopeKernelBuilder::rotatePair(OpBuilder &kb, ValueRange tokenIvs,
                                   ValueRange headIvs, Value j, Value cos,
                                   Value sin,
                                   const GroupNeighbours &neighbours) {
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t storedBytes = storageType.getIntOrFloatBitWidth() / 8;
  // The stored value of an output (the destination's type; quantized with
  // quant_scale).
  auto stored = [&](Value y) {
    return buildStoredValue(kb, loc, y, storageType, neighbours.scale);
  };
  // (x1 + i x2)(c + i s), with the rounding of every lowering (rotatePair).
  auto rotate = [&](Value x1, Value x2) {
    auto [y1, y2] = mlir::rope::rotatePair(kb, loc, x1, x2, cos, sin);
    return std::pair<Value, Value>(stored(y1), stored(y2));
  };
  if (op.getLayout() == Layout::half) {
    // V channels from each half: x[j : j + V] and x[P/2 + j : P/2 + j + V].
    Value second = arith::AddIOp::create(kb, loc, j, index(kb, numPairs));
    SmallVector<Value> at1 = rowIndex(tokenIvs, headIvs, j);
    SmallVector<Value> at2 = rowIndex(tokenIvs, headIvs, second);
    auto [y1, y2] =
        rotate(normalized(kb, loadLanes(kb, input, at1, width, width * bytes),
                          neighbours.factor, neighbours.weight1),
               normalized(kb, loadLanes(kb, input, at2, width, width * bytes),
                          neighbours.factor, neighbours.weight2));
    storeLanes(kb, y1, output, storeIndex(tokenIvs, headIvs, j),
               width * storedBytes);
    storeLanes(kb, y2, output, storeIndex(tokenIvs, headIvs, second),
               width * storedBytes);
    return;
  }
  // Interleaved: pairs (2j, 2j + 1) ... (2j + 2V - 2, 2j + 2V - 1) are one
  // aligned vector of 2V channels (every row starts at a multiple of 2V).
  Value channel = arith::MulIOp::create(kb, loc, j, index(kb, 2));
  SmallVector<Value> at = rowIndex(tokenIvs, headIvs, channel);
  SmallVector<Value> out = storeIndex(tokenIvs, headIvs, channel);
  auto rowType = VectorType::get({2 * width}, storageType);
  int64_t storeAlign = 2 * width * storedBytes;
  Value x = loadLanes(kb, input, at, 2 * width, 2 * width * bytes);
  if (width == 1) {
    // The pair's two channels (and their norm weights) as scalars.
    auto member = [&](int64_t i) {
      Value weight =
          neighbours.weight1
              ? vector::ExtractOp::create(kb, loc, neighbours.weight1, i)
              : Value();
      return normalized(kb, vector::ExtractOp::create(kb, loc, x, i),
                        neighbours.factor, weight);
    };
    auto [y1, y2] = rotate(member(0), member(1));
    storeLanes(
        kb,
        vector::FromElementsOp::create(kb, loc, rowType, ValueRange{y1, y2}),
        output, out, storeAlign);
    return;
  }
  x = normalized(kb, x, neighbours.factor, neighbours.weight1);
  // As on the CPU: cos/sin were spread over the lanes once per token
  // ([c0, c0, c1, c1, ...], [-s0, s0, -s1, s1, ...]), so
  // y = x * c + swap(x) * s with one in-register pair swap.
  Value y = rotateInterleavedLanes(kb, loc, x, cos, sin);
  storeLanes(kb, stored(y), output, out, storeAlign);
}

Value RopeKernelBuilder::normalized(OpBuilder &kb, Value x, Value factor,
                                    Value weight) {
  x = convertFloat(kb, loc, x, computeType);
  if (!factor)
    return x;
  return applyRmsNorm(kb, loc, x, factor, weight);
}

Value RopeKernelBuilder::scaleOf(OpBuilder &kb, ValueRange headIvs) {
  if (!quantScale)
    return Value();
  if (tensorScale)
    return tensorScale;
  // Per head: the op's one head dim (the verifier checked it exists).
  assert(headIvs.size() == 1 && op.getSingleHeadDim() == headDims.front());
  return memref::LoadOp::create(kb, loc, quantScale, headIvs);
}

Value RopeKernelBuilder::weightLanes(OpBuilder &kb, Value channel,
                                     int64_t count) {
  int64_t bytes =
      cast<MemRefType>(normWeight.getType()).getElementTypeBitWidth() / 8;
  return loadLanes(kb, normWeight, ValueRange{channel}, count,
                   std::min<int64_t>(count * bytes, 16));
}

Value RopeKernelBuilder::rowNormFactor(OpBuilder &kb, ValueRange tokenIvs,
                                       ValueRange headIvs) {
  // The accesses of the rotation (V channels for half, 2V for interleaved):
  // D is a whole number of them (chooseWidth).
  int64_t lanes = op.getLayout() == Layout::half ? width : 2 * width;
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  Type accType =
      lanes == 1 ? computeType : Type(VectorType::get({lanes}, computeType));
  Value zero = buildFloatConstant(kb, loc, accType, 0.0);
  Value acc =
      scf::ForOp::create(
          kb, loc, index(kb, 0), index(kb, headDim), index(kb, lanes),
          ValueRange{zero},
          [&](OpBuilder &cb, Location, Value ch, ValueRange args) {
            Value x = convertFloat(cb, loc,
                                   loadLanes(cb, input,
                                             rowIndex(tokenIvs, headIvs, ch),
                                             lanes, lanes * bytes),
                                   computeType);
            scf::YieldOp::create(
                cb, loc,
                ValueRange{math::FmaOp::create(cb, loc, x, x, args.front())});
          })
          .getResult(0);
  Value sum = lanes == 1 ? acc
                         : vector::ReductionOp::create(
                               kb, loc, vector::CombiningKind::ADD, acc)
                               .getResult();
  return buildRmsNormFactor(kb, loc, sum, headDim,
                            op.getNormEpsilonAttr().getValueAsDouble());
}

void RopeKernelBuilder::buildNormTokenBody(OpBuilder &tb, ValueRange tokenIvs,
                                           Value tx, Value firstJ) {
  bool half = op.getLayout() == Layout::half;
  struct Group {
    Value j, exists, cos, sin, weight1, weight2;
  };
  // The cos/sin and norm weights of group j (`exists`: null, or whether the
  // group exists in this thread; when it does not, group 0 is computed).
  auto makeGroup = [&](OpBuilder &gb, Value j, Value exists) {
    Group group;
    group.exists = exists;
    if (exists)
      j = arith::SelectOp::create(gb, loc, exists, j, index(gb, 0));
    group.j = j;
    Value theta = op.getCos() ? Value() : thetaOf(gb, j);
    std::pair<Value, Value> cs = core->cosSin(gb, loc, *reader, tokenIvs, j,
                                              width == 1 ? 0 : width, theta);
    if (!half && width > 1)
      cs = spreadForInterleavedLanes(gb, loc, cs.first, cs.second);
    group.cos = cs.first;
    group.sin = cs.second;
    if (half) {
      group.weight1 = weightLanes(gb, j, width);
      group.weight2 = weightLanes(
          gb, arith::AddIOp::create(gb, loc, j, index(gb, numPairs)), width);
    } else {
      group.weight1 = weightLanes(
          gb, arith::MulIOp::create(gb, loc, j, index(gb, 2)), 2 * width);
    }
    return group;
  };
  // The thread's frequency groups j_g = firstJ + g V TX, g < G: all but the
  // last exist in every thread. When they hold at most kMaxHoistedPairs
  // pairs, their cos/sin are computed once per token, before the heads loop
  // (kept in registers); more (one thread per row: in place) are computed
  // per row, in a loop.
  constexpr int64_t kMaxHoistedPairs = 8;
  int64_t groupCount = numPairs / width;
  int64_t groupsPerThread = llvm::divideCeil(groupCount, blockX);
  bool hoisted = groupsPerThread * width <= kMaxHoistedPairs;
  SmallVector<Group> groups;
  for (int64_t g = 0; hoisted && g < groupsPerThread; ++g) {
    Value j = g == 0 ? firstJ
                     : arith::AddIOp::create(tb, loc, firstJ,
                                             index(tb, g * blockX * width));
    Value exists;
    if (groupCount % blockX != 0 && g + 1 == groupsPerThread)
      exists = arith::CmpIOp::create(tb, loc, arith::CmpIPredicate::ult, j,
                                     index(tb, numPairs));
    groups.push_back(makeGroup(tb, j, exists));
  }
  forEachHead(tb, [&](OpBuilder &hb, ValueRange headIvs) {
    Value factor = rowNormFactor(hb, tokenIvs, headIvs);
    Value scale = scaleOf(hb, headIvs);
    auto rotate = [&](OpBuilder &rb, const Group &group) {
      rotatePair(rb, tokenIvs, headIvs, group.j, group.cos, group.sin,
                 {factor, group.weight1, group.weight2, scale});
    };
    for (const Group &group : groups) {
      if (!group.exists) {
        rotate(hb, group);
        continue;
      }
      scf::IfOp::create(hb, loc, group.exists, [&](OpBuilder &ib, Location) {
        rotate(ib, group);
        scf::YieldOp::create(ib, loc);
      });
    }
    if (!hoisted)
      scf::ForOp::create(hb, loc, firstJ, index(hb, numPairs),
                         index(hb, blockX * width), ValueRange{},
                         [&](OpBuilder &jb, Location, Value j, ValueRange) {
                           rotate(jb, makeGroup(jb, j, Value()));
                           scf::YieldOp::create(jb, loc);
                         });
    // Pass-through channels [P, D): normalized (and quantized) too.
    if (rotaryDim == headDim)
      return;
    Value first = arith::AddIOp::create(hb, loc, tx, index(hb, rotaryDim));
    scf::ForOp::create(
        hb, loc, first, index(hb, headDim), index(hb, blockX), ValueRange{},
        [&](OpBuilder &cb, Location, Value ch, ValueRange) {
          SmallVector<Value> at = rowIndex(tokenIvs, headIvs, ch);
          Value x = normalized(cb, memref::LoadOp::create(cb, loc, input, at),
                               factor, weightLanes(cb, ch, 1));
          memref::StoreOp::create(
              cb, loc, buildStoredValue(cb, loc, x, storageType, scale), output,
              storeIndex(tokenIvs, headIvs, ch));
          scf::YieldOp::create(cb, loc);
        });
  });
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
  buffers[op.getInput()] = input;
  for (Value operand : SmallVector<Value>{op.getPositions(), op.getOffset(),
                                          op.getCos(), op.getSin()})
    if (operand && isa<RankedTensorType>(operand.getType()))
      buffers[operand] = bufferOf(operand, /*readOnly=*/true);
  if (Value weight = op.getNormWeight())
    normWeight = bufferOf(weight, /*readOnly=*/true);
  if (Value scale = op.getQuantScale())
    quantScale = bufferOf(scale, /*readOnly=*/true);
  if (Value slots = op.getSlots()) {
    slotsBuffer = bufferOf(slots, /*readOnly=*/true);
    auto cacheType = cast<RankedTensorType>(op.getInit().getType());
    for (int64_t d : tokenDims)
      cacheTokenSizes.push_back(
          cacheType.isDynamicDim(d)
              ? Value(memref::DimOp::create(b, loc, output, d))
              : Value(index(b, cacheType.getDimSize(d))));
  }
  reader.emplace(buffers);
  core.emplace(op);
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
  // QK-norm in place: one thread per row (it reads the whole row for its
  // sum of squares before it stores any channel of it; no other thread
  // stores into the row).
  blockX = normWeight && inPlace
               ? 1
               : std::min<int64_t>(numPairs / width, options.blockSize);
  int64_t blockY = std::max<int64_t>(1, options.blockSize / blockX);
  scf::IfOp guard = guardLaunch(b, loc, inputType, headDims, numHeads);
  TokenLaunch grid =
      launchOverTokens(b, loc, numTokens, blockX, blockY, options.maxBlocks);
  OpBuilder &kb = grid.body;
  Value tx = grid.tx, firstToken = grid.firstToken,
        tokenStride = grid.tokenStride;
  Value firstJ =
      width == 1 ? tx : arith::MulIOp::create(kb, loc, tx, index(kb, width));
  // Once per thread: the scalar offset, the cache's rows and, for a
  // length-dependent scheme, the call's length (from device buffers: the
  // kernel is all that runs on the device) and the scheme's state; a
  // per-tensor quantization scale.
  core->buildPerCall(kb, loc, *reader);
  if (!op.getCos())
    frequencyState =
        buildFrequencyStateOf(kb, loc, op, *core, *reader, angleMethod());
  if (quantScale && cast<MemRefType>(quantScale.getType()).getRank() == 0)
    tensorScale = memref::LoadOp::create(kb, loc, quantScale, ValueRange{});

  scf::ForOp::create(
      kb, loc, firstToken, numTokens, tokenStride, ValueRange{},
      [&](OpBuilder &lb, Location, Value t, ValueRange) {
        SmallVector<Value> tokenIvs = delinearize(lb, t, tokenSizes);
        // The token's work (reads at its own index, stores at storeIndex).
        auto tokenBody = [&](OpBuilder &tb) {
          if (normWeight) {
            buildNormTokenBody(tb, tokenIvs, tx, firstJ);
            return;
          }
          buildTokenBody(tb, tokenIvs, tx, firstJ);
        };
        if (!slotsBuffer) {
          tokenBody(lb);
          scf::YieldOp::create(lb, loc);
          return;
        }
        // KV-cache append: the token's cache row from its slot; all of the
        // token's work, every store included, only for a valid slot.
        CacheSlot slot = buildCacheSlot(
            lb, loc, memref::LoadOp::create(lb, loc, slotsBuffer, tokenIvs),
            cacheTokenSizes);
        slotIvs = slot.indices;
        scf::IfOp::create(lb, loc, slot.valid, [&](OpBuilder &ib, Location) {
          tokenBody(ib);
          scf::YieldOp::create(ib, loc);
        });
        scf::YieldOp::create(lb, loc);
      });
  gpu::TerminatorOp::create(kb, loc);
  if (guard)
    b.setInsertionPointAfter(guard);

  return bufferization::ToTensorOp::create(b, loc, op.getResult().getType(),
                                           output, /*restrict=*/true,
                                           /*writable=*/true);
}

void RopeKernelBuilder::buildTokenBody(OpBuilder &tb, ValueRange tokenIvs,
                                       Value tx, Value firstJ) {
  Value stepX = index(tb, blockX), stepJ = index(tb, blockX * width);
  scf::ForOp::create(
      tb, loc, firstJ, index(tb, numPairs), stepJ, ValueRange{},
      [&](OpBuilder &jb, Location, Value j, ValueRange) {
        Value theta = op.getCos() ? Value() : thetaOf(jb, j);
        std::pair<Value, Value> cs = core->cosSin(
            jb, loc, *reader, tokenIvs, j, width == 1 ? 0 : width, theta);
        if (op.getLayout() == Layout::interleaved && width > 1)
          cs = spreadForInterleavedLanes(jb, loc, cs.first, cs.second);
        forEachHead(jb, [&](OpBuilder &hb, ValueRange headIvs) {
          rotatePair(hb, tokenIvs, headIvs, j, cs.first, cs.second,
                     {Value(), Value(), Value(), scaleOf(hb, headIvs)});
        });
        scf::YieldOp::create(jb, loc);
      });
  // Pass-through channels [P, D), unless already in place: copied, or
  // quantized with quant_scale.
  if (rotaryDim < headDim && !inPlace) {
    Value first = arith::AddIOp::create(tb, loc, tx, index(tb, rotaryDim));
    scf::ForOp::create(
        tb, loc, first, index(tb, headDim), stepX, ValueRange{},
        [&](OpBuilder &cb, Location, Value ch, ValueRange) {
          forEachHead(cb, [&](OpBuilder &hb, ValueRange headIvs) {
            SmallVector<Value> at = rowIndex(tokenIvs, headIvs, ch);
            Value x = memref::LoadOp::create(hb, loc, input, at);
            if (quantScale)
              x = buildStoredValue(hb, loc,
                                   convertFloat(hb, loc, x, computeType),
                                   storageType, scaleOf(hb, headIvs));
            memref::StoreOp::create(hb, loc, x, output,
                                    storeIndex(tokenIvs, headIvs, ch));
          });
          scf::YieldOp::create(cb, loc);
        });
  }
}

/// Builds the kernel of one `rope.cache_write`: a coalesced copy of the
/// token rows into their cache rows.
///
///   blockDim = (TX: 16-byte pieces of a row's D channels, TY: tokens)
///   for t = blockIdx.x * TY + ty; t < T; t += gridDim.x * TY  // grid-stride
///     slot -> (valid, cache row)                 // buildCacheSlot
///     if valid:
///       for h in heads:                          // the head's scale once
///         for c = V tx; c < D; c += V TX: cache[row, h, c : c+V] =
///                                          stored(input[t, h, c : c+V])
///
/// Neighbouring threads copy neighbouring 16-byte pieces of one row (V
/// input elements; a quantized store is V narrower elements), so a warp's
/// loads and stores are contiguous runs of the input and cache rows.
static Value buildCacheWriteKernel(PatternRewriter &b, CacheWriteOp op,
                                   const RopeToGPUOptions &options) {
  Location loc = op.getLoc();
  RankedTensorType inputType = op.getInputType();
  int64_t rank = inputType.getRank();
  int64_t headDim = inputType.getShape().back();
  SmallVector<int64_t> tokenDims = op.getTokenDimsOrDefault(), headDims;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (!llvm::is_contained(tokenDims, d))
      headDims.push_back(d);
  Type elementType = inputType.getElementType();
  Type storageType = op.getStorageElementType();
  Type computeType = getComputeElementType(elementType);
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };

  // Buffers and sizes, on the host.
  Value cache = kernelBufferOf(b, loc, op.getInit(), /*readOnly=*/false);
  Value input = kernelBufferOf(b, loc, op.getInput(), /*readOnly=*/true);
  Value slots = kernelBufferOf(b, loc, op.getSlots(), /*readOnly=*/true);
  Value scale = op.getQuantScale() ? kernelBufferOf(b, loc, op.getQuantScale(),
                                                    /*readOnly=*/true)
                                   : Value();
  auto sizesOf = [&](Value buffer, ArrayRef<int64_t> dims) {
    auto type = cast<MemRefType>(buffer.getType());
    return llvm::map_to_vector(dims, [&](int64_t d) -> Value {
      if (type.isDynamicDim(d))
        return memref::DimOp::create(b, loc, buffer, d);
      return index(b, type.getDimSize(d));
    });
  };
  SmallVector<Value> tokenSizes = sizesOf(input, tokenDims);
  SmallVector<Value> headSizes = sizesOf(input, headDims);
  SmallVector<Value> cacheTokenSizes = sizesOf(cache, tokenDims);
  auto product = [&](ArrayRef<Value> sizes) {
    Value result = index(b, 1);
    for (Value size : sizes)
      result = arith::MulIOp::create(b, loc, result, size);
    return result;
  };
  Value numTokens = product(tokenSizes), numHeads = product(headSizes);

  // V input elements per access: 16 bytes, dividing D and as aligned as
  // the buffers (slices of others: alignedElements).
  int64_t bytes = elementType.getIntOrFloatBitWidth() / 8;
  int64_t storedBytes = storageType.getIntOrFloatBitWidth() / 8;
  int64_t width = options.vectorize ? std::max<int64_t>(1, 16 / bytes) : 1;
  int64_t aligned =
      std::min(alignedElements(op.getInput()), alignedElements(op.getInit()));
  while (width > 1 && (headDim % width != 0 || aligned % width != 0))
    width /= 2;
  int64_t blockX = std::min<int64_t>(headDim / width, options.blockSize);
  int64_t blockY = std::max<int64_t>(1, options.blockSize / blockX);
  scf::IfOp guard = guardLaunch(b, loc, inputType, headDims, numHeads);
  TokenLaunch grid =
      launchOverTokens(b, loc, numTokens, blockX, blockY, options.maxBlocks);
  OpBuilder &kb = grid.body;
  Value tx = grid.tx, firstToken = grid.firstToken,
        tokenStride = grid.tokenStride;
  Value firstChannel =
      width == 1 ? tx : arith::MulIOp::create(kb, loc, tx, index(kb, width));
  Value tensorScale;
  if (scale && cast<MemRefType>(scale.getType()).getRank() == 0)
    tensorScale = memref::LoadOp::create(kb, loc, scale, ValueRange{});

  auto delinearize = [&](OpBuilder &ib, Value linear, ArrayRef<Value> sizes) {
    SmallVector<Value> ivs(sizes.size());
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i > 0; --i) {
      ivs[i] = arith::RemUIOp::create(ib, loc, linear, sizes[i]);
      linear = arith::DivUIOp::create(ib, loc, linear, sizes[i]);
    }
    if (!sizes.empty())
      ivs[0] = linear;
    return ivs;
  };
  auto rowIndex = [&](ValueRange tokenIvs, ValueRange headIvs, Value ch) {
    SmallVector<Value> indices(rank);
    for (auto [d, iv] : llvm::zip_equal(tokenDims, tokenIvs))
      indices[d] = iv;
    for (auto [d, iv] : llvm::zip_equal(headDims, headIvs))
      indices[d] = iv;
    indices.back() = ch;
    return indices;
  };
  VectorType inputLanes = VectorType::get({width}, elementType);

  scf::ForOp::create(
      kb, loc, firstToken, numTokens, tokenStride, ValueRange{},
      [&](OpBuilder &tb, Location, Value t, ValueRange) {
        SmallVector<Value> tokenIvs = delinearize(tb, t, tokenSizes);
        CacheSlot slot = buildCacheSlot(
            tb, loc, memref::LoadOp::create(tb, loc, slots, tokenIvs),
            cacheTokenSizes);
        // Nothing of an invalid slot's token is stored.
        scf::IfOp::create(tb, loc, slot.valid, [&](OpBuilder &ib, Location) {
          scf::ForOp::create(
              ib, loc, index(ib, 0), numHeads, index(ib, 1), ValueRange{},
              [&](OpBuilder &hb, Location, Value h, ValueRange) {
                SmallVector<Value> headIvs = delinearize(hb, h, headSizes);
                Value rowScale = tensorScale;
                if (scale && !rowScale)
                  rowScale = memref::LoadOp::create(hb, loc, scale, headIvs);
                scf::ForOp::create(
                    hb, loc, firstChannel, index(hb, headDim),
                    index(hb, blockX * width), ValueRange{},
                    [&](OpBuilder &cb, Location, Value ch, ValueRange) {
                      SmallVector<Value> from = rowIndex(tokenIvs, headIvs, ch);
                      SmallVector<Value> to =
                          rowIndex(slot.indices, headIvs, ch);
                      Value x = width == 1
                                    ? Value(memref::LoadOp::create(cb, loc,
                                                                   input, from))
                                    : Value(vector::LoadOp::create(
                                          cb, loc, inputLanes, input, from,
                                          /*nontemporal=*/false,
                                          llvm::MaybeAlign(width * bytes)));
                      if (scale)
                        x = buildStoredValue(
                            cb, loc, convertFloat(cb, loc, x, computeType),
                            storageType, rowScale);
                      if (width == 1)
                        memref::StoreOp::create(cb, loc, x, cache, to);
                      else
                        vector::StoreOp::create(
                            cb, loc, x, cache, to, /*nontemporal=*/false,
                            llvm::MaybeAlign(width * storedBytes));
                      scf::YieldOp::create(cb, loc);
                    });
                scf::YieldOp::create(hb, loc);
              });
          scf::YieldOp::create(ib, loc);
        });
        scf::YieldOp::create(tb, loc);
      });
  gpu::TerminatorOp::create(kb, loc);
  if (guard)
    b.setInsertionPointAfter(guard);
  return bufferization::ToTensorOp::create(b, loc, op.getResult().getType(),
                                           cache, /*restrict=*/true,
                                           /*writable=*/true);
}

namespace {
struct LowerCacheWriteToGPU : OpRewritePattern<CacheWriteOp> {
  LowerCacheWriteToGPU(MLIRContext *context, const RopeToGPUOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(CacheWriteOp op,
                                PatternRewriter &rewriter) const override {
    // A statically empty input launches nothing (EmptyGuard.h; a dynamic
    // one: guardLaunch).
    if (hasStaticZeroDim(op.getInput())) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    rewriter.setInsertionPoint(op);
    rewriter.replaceOp(op, buildCacheWriteKernel(rewriter, op, options));
    return success();
  }

  RopeToGPUOptions options;
};
} // namespace

namespace {
struct LowerRopeApplyToGPU : OpRewritePattern<ApplyOp> {
  LowerRopeApplyToGPU(MLIRContext *context, const RopeToGPUOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ApplyOp op,
                                PatternRewriter &rewriter) const override {
    // A statically empty input launches nothing (EmptyGuard.h; a dynamic
    // one: guardLaunch).
    if (hasStaticZeroDim(op.getInput())) {
      rewriter.replaceOp(op, op.getInit());
      return success();
    }
    if (failed(angleMethodFor(op, options.angle)))
      return failure();
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
    target.addIllegalOp<ApplyOp, CacheWriteOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateRopeToGPUConversionPatterns(
        patterns, {blockSize, maxBlocks, vectorize, angle});
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::rope::populateRopeToGPUConversionPatterns(
    RewritePatternSet &patterns, const RopeToGPUOptions &options) {
  patterns.add<LowerRopeApplyToGPU, LowerCacheWriteToGPU>(patterns.getContext(),
                                                          options);
}
