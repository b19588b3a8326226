//===- KernelCall.cpp - The checked fast path of Kernel.__call__ ----------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A CPython extension (stable ABI, 3.11+) that calls a compiled `rope.apply`
// kernel on numpy arrays for the cost of the kernel: every argument is checked
// here, in C++, the memref descriptors are built on the stack, and nothing is
// allocated (python/rope_mlir/kernel.py, Kernel.__call__).
//
// A plan accepts a call only when every argument is exactly what the kernel
// was compiled for (exact numpy arrays of the right format, shape, layout and
// writeability, no destination overlapping any input, positions that do not
// wrap int64, gathered positions inside the cache, not empty) and then
// runs it; anything else makes it answer None, and the Python path takes the
// call: it converts what it may convert and raises the error that names the
// argument. So the error messages live in one place, and this path is only
// ever stricter than the one it speeds up (python/tests/api/test_kernel_call.py
// checks both on the same arguments).
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030B0000
#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>

namespace {

// The largest rank a plan takes; higher ranks keep the Python path.
constexpr int kMaxRank = 12;
// x, positions or offset, cos, sin, out; then k and its out (a q/k pair).
constexpr int kMaxArguments = 7;

enum PositionForm { kExplicit = 0, kOffset = 1, kRowOffset = 2, kNone = 3 };
enum CacheForm { kNoCache = 0, kGathered = 1, kPregathered = 2 };

/// A shape fixed at compile time, or none (rank < 0).
struct StaticShape {
  int rank = -1;
  Py_ssize_t sizes[kMaxRank + 1] = {};
};

/// An element type: the numpy dtype object (a strong reference) and its size.
struct Element {
  PyObject *dtype = nullptr;
  Py_ssize_t itemsize = 0;
};

struct Plan {
  PyObject_HEAD void *function;
  PyObject *ndarrayType;
  bool inplace;
  int rank;
  Py_ssize_t headDim;
  int numTokenDims;
  int tokenDims[kMaxRank];
  Element x;
  StaticShape staticShape;
  int positions;
  Element position;
  bool mrope;
  StaticShape staticPositionsShape;
  Element rowOffset;
  StaticShape staticOffsetShape;
  int cache;
  Element cacheElement;
  int members; // 1: one rope.apply; 2: a q/k pair
  Py_ssize_t pairs;
  StaticShape staticCacheShape;
};

/// A buffer held for the duration of the call.
struct View {
  Py_buffer buffer;
  bool held = false;
  View() = default;
  View(const View &) = delete;
  ~View() {
    if (held)
      PyBuffer_Release(&buffer);
  }
  const char *begin() const { return static_cast<const char *>(buffer.buf); }
  const char *end() const { return begin() + buffer.len; }
};

bool overlaps(const View &a, const View &b) {
  return a.begin() < b.end() && b.begin() < a.end();
}

/// Whether `object`'s dtype equals `dtype` (numpy's ==: byte order counts),
/// the Python path's test; builtin dtypes are singletons, so mostly `is`.
bool hasDtype(PyObject *object, PyObject *dtype) {
  static PyObject *name = PyUnicode_InternFromString("dtype");
  if (!name)
    return false;
  PyObject *actual = PyObject_GetAttr(object, name);
  if (!actual) {
    PyErr_Clear();
    return false;
  }
  int equal =
      actual == dtype ? 1 : PyObject_RichCompareBool(actual, dtype, Py_EQ);
  Py_DECREF(actual);
  if (equal < 0)
    PyErr_Clear();
  return equal == 1;
}

/// Whether `object` is an exact numpy array of `element` (no subclass, no
/// other exporter: the Python path decides about those), C-contiguous as
/// numpy defines it (size-1 dims may have any stride), aligned to its item
/// size, not empty and of rank <= kMaxRank; held in `view` when it is. (The
/// buffer is asked for without a format: numpy has none for bfloat16.)
bool acquire(const Plan &plan, PyObject *object, const Element &element,
             bool writable, View &view) {
  if (reinterpret_cast<PyObject *>(Py_TYPE(object)) != plan.ndarrayType ||
      !hasDtype(object, element.dtype))
    return false;
  int flags = PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object, &view.buffer, flags) != 0) {
    PyErr_Clear(); // e.g. read-only for a destination: the Python path says
    return false;
  }
  view.held = true;
  const Py_buffer &b = view.buffer;
  if (b.ndim > kMaxRank || b.itemsize != element.itemsize ||
      reinterpret_cast<std::uintptr_t>(b.buf) % b.itemsize != 0)
    return false;
  Py_ssize_t expected = b.itemsize;
  for (int i = b.ndim - 1; i >= 0; --i) {
    if (b.shape[i] == 0)
      return false;
    if (b.shape[i] != 1 && b.strides[i] != expected)
      return false;
    expected *= b.shape[i];
  }
  return true;
}

bool hasShape(const View &view, int rank, const Py_ssize_t *sizes) {
  if (view.buffer.ndim != rank)
    return false;
  for (int i = 0; i < rank; ++i)
    if (view.buffer.shape[i] != sizes[i])
      return false;
  return true;
}

bool matchesStatic(const View &view, const StaticShape &shape) {
  return shape.rank < 0 || hasShape(view, shape.rank, shape.sizes);
}

/// The memref descriptor of a held view: {allocated, aligned, offset,
/// sizes..., strides...} with row-major strides in elements.
void describe(const View &view, std::int64_t *descriptor) {
  const Py_buffer &b = view.buffer;
  auto address = reinterpret_cast<std::int64_t>(b.buf);
  descriptor[0] = descriptor[1] = address;
  descriptor[2] = 0;
  std::int64_t stride = 1;
  for (int i = b.ndim - 1; i >= 0; --i) {
    descriptor[3 + i] = b.shape[i];
    descriptor[3 + b.ndim + i] = stride;
    stride *= b.shape[i];
  }
}

/// Smallest and largest value of a held integer view (int32 or int64).
void integerRange(const View &view, std::int64_t &low, std::int64_t &high) {
  Py_ssize_t count = view.buffer.len / view.buffer.itemsize;
  auto scan = [&](auto *values) {
    low = high = values[0];
    for (Py_ssize_t i = 1; i < count; ++i) {
      std::int64_t value = values[i];
      low = value < low ? value : low;
      high = value > high ? value : high;
    }
  };
  if (view.buffer.itemsize == 4)
    scan(static_cast<const std::int32_t *>(view.buffer.buf));
  else
    scan(static_cast<const std::int64_t *>(view.buffer.buf));
}

/// Whether `object` is the int 0 exactly (not a bool, not another type).
bool isIntZero(PyObject *object) {
  if (Py_TYPE(object) != &PyLong_Type)
    return false;
  int overflow = 0;
  long long value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (value == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return overflow == 0 && value == 0;
}

void runKernel(void *function, const std::intptr_t *a, int count) {
  // Every argument is pointer-sized and of integer class (descriptor
  // addresses, an int64 offset): the same registers whatever their C type.
  using I = std::intptr_t;
  switch (count) {
  case 1:
    reinterpret_cast<void (*)(I)>(function)(a[0]);
    break;
  case 2:
    reinterpret_cast<void (*)(I, I)>(function)(a[0], a[1]);
    break;
  case 3:
    reinterpret_cast<void (*)(I, I, I)>(function)(a[0], a[1], a[2]);
    break;
  case 4:
    reinterpret_cast<void (*)(I, I, I, I)>(function)(a[0], a[1], a[2], a[3]);
    break;
  case 5:
    reinterpret_cast<void (*)(I, I, I, I, I)>(function)(a[0], a[1], a[2], a[3],
                                                        a[4]);
    break;
  case 6:
    reinterpret_cast<void (*)(I, I, I, I, I, I)>(function)(a[0], a[1], a[2],
                                                           a[3], a[4], a[5]);
    break;
  case 7:
    reinterpret_cast<void (*)(I, I, I, I, I, I, I)>(function)(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    break;
  }
}

/// plan(x, positions, offset, cos_cache, sin_cache, out): the result (out,
/// or x in place) after running the kernel, or None when the call must take
/// the Python path. A q/k pair's plan (two members, fused.apply_qk) takes
/// (q, k, positions, offset, cos_cache, sin_cache, out_q, out_k) and returns
/// (out_q, out_k), or (q, k) in place: k is checked as x is, its token sizes
/// must be q's, and no destination may overlap another argument it is not.
PyObject *callPlan(PyObject *self, PyObject *args, PyObject *kwargs) {
  const Plan &plan = *reinterpret_cast<Plan *>(self);
  bool pair = plan.members == 2;
  if (!plan.function || kwargs || PyTuple_Size(args) != (pair ? 8 : 6)) {
    PyErr_SetString(PyExc_TypeError,
                    pair ? "a q/k plan takes (q, k, positions, offset, "
                           "cos_cache, sin_cache, out_q, out_k)"
                         : "a kernel plan takes (x, positions, offset, "
                           "cos_cache, sin_cache, out)");
    return nullptr;
  }
  int shared = pair ? 2 : 1; // where positions, offset, caches start
  PyObject *x = PyTuple_GetItem(args, 0);
  PyObject *k = pair ? PyTuple_GetItem(args, 1) : nullptr;
  PyObject *positions = PyTuple_GetItem(args, shared);
  PyObject *offset = PyTuple_GetItem(args, shared + 1);
  PyObject *cos = PyTuple_GetItem(args, shared + 2);
  PyObject *sin = PyTuple_GetItem(args, shared + 3);
  PyObject *out = PyTuple_GetItem(args, shared + 4);
  PyObject *outK = pair ? PyTuple_GetItem(args, shared + 5) : nullptr;

  View xView, indexView, cosView, sinView, outView, kView, outKView;
  std::int64_t descriptors[kMaxArguments][3 + 2 * (kMaxRank + 1)];
  std::intptr_t arguments[kMaxArguments];
  int count = 0;
  auto pass = [&](const View &view) {
    describe(view, descriptors[count]);
    arguments[count] = reinterpret_cast<std::intptr_t>(descriptors[count]);
    ++count;
  };

  // x (the destination too when in place).
  if (plan.inplace && (out != x || (pair && outK != k)))
    Py_RETURN_NONE;
  if (!acquire(plan, x, plan.x, plan.inplace, xView))
    Py_RETURN_NONE;
  const Py_buffer &xb = xView.buffer;
  if (xb.ndim != plan.rank || xb.shape[plan.rank - 1] != plan.headDim ||
      !matchesStatic(xView, plan.staticShape))
    Py_RETURN_NONE;
  Py_ssize_t tokenSizes[kMaxRank + 1];
  for (int i = 0; i < plan.numTokenDims; ++i)
    tokenSizes[i] = xb.shape[plan.tokenDims[i]];
  pass(xView);

  // Positions or offsets.
  std::int64_t low = 0, high = 0; // the cache rows read when gathered
  Py_ssize_t sequence = tokenSizes[plan.numTokenDims - 1];
  switch (plan.positions) {
  case kExplicit: {
    if (!isIntZero(offset) ||
        !acquire(plan, positions, plan.position, false, indexView))
      Py_RETURN_NONE;
    Py_ssize_t expected[kMaxRank + 1];
    int rank = 0;
    if (plan.mrope)
      expected[rank++] = 3;
    for (int i = 0; i < plan.numTokenDims; ++i)
      expected[rank++] = tokenSizes[i];
    if (!hasShape(indexView, rank, expected) ||
        !matchesStatic(indexView, plan.staticPositionsShape))
      Py_RETURN_NONE;
    pass(indexView);
    if (plan.cache == kGathered)
      integerRange(indexView, low, high);
    break;
  }
  case kOffset: {
    if (positions != Py_None || Py_TYPE(offset) != &PyLong_Type)
      Py_RETURN_NONE;
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(offset, &overflow);
    if (value == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    if (overflow)
      Py_RETURN_NONE;
    arguments[count++] = static_cast<std::intptr_t>(value);
    // The last position, offset + sequence - 1, must fit int64 (else the
    // kernel's sum wraps): the Python path says so.
    if (__builtin_add_overflow(value, sequence - 1, &high))
      Py_RETURN_NONE;
    low = value;
    break;
  }
  case kRowOffset: {
    if (positions != Py_None ||
        !acquire(plan, offset, plan.rowOffset, false, indexView) ||
        !hasShape(indexView, 1, tokenSizes) ||
        !matchesStatic(indexView, plan.staticOffsetShape))
      Py_RETURN_NONE;
    pass(indexView);
    integerRange(indexView, low, high);
    if (__builtin_add_overflow(high, sequence - 1, &high))
      Py_RETURN_NONE; // a wrapping position: the Python path says so
    break;
  }
  default:
    if (positions != Py_None || !isIntZero(offset))
      Py_RETURN_NONE;
  }

  // The cos/sin caches.
  if (plan.cache == kNoCache) {
    if (cos != Py_None || sin != Py_None)
      Py_RETURN_NONE;
  } else {
    if (!acquire(plan, cos, plan.cacheElement, false, cosView) ||
        !acquire(plan, sin, plan.cacheElement, false, sinView) ||
        !matchesStatic(cosView, plan.staticCacheShape))
      Py_RETURN_NONE;
    const Py_buffer &cb = cosView.buffer;
    if (!hasShape(sinView, cb.ndim, cb.shape))
      Py_RETURN_NONE;
    if (plan.cache == kGathered) {
      if (cb.ndim != 2 || cb.shape[1] != plan.pairs)
        Py_RETURN_NONE;
      if (low < 0 || high >= cb.shape[0])
        Py_RETURN_NONE; // a position without a cached angle
    } else {
      tokenSizes[plan.numTokenDims] = plan.pairs;
      if (!hasShape(cosView, plan.numTokenDims + 1, tokenSizes))
        Py_RETURN_NONE;
    }
    pass(cosView);
    pass(sinView);
  }

  // Whether a destination overlaps an array the kernel reads while it
  // writes (positions or offsets, cos/sin): the Python path then names it.
  auto overlapsInputs = [&](const View &destination) {
    for (const View *input : {&indexView, &cosView, &sinView})
      if (input->held && overlaps(destination, *input))
        return true;
    return false;
  };

  // The destination.
  const View *destination = &xView;
  if (!plan.inplace) {
    if (!acquire(plan, out, plan.x, true, outView) ||
        !hasShape(outView, xb.ndim, xb.shape) || overlaps(outView, xView))
      Py_RETURN_NONE;
    pass(outView);
    destination = &outView;
  }
  if (overlapsInputs(*destination))
    Py_RETURN_NONE;

  if (pair) {
    // k: as x, with q's token sizes; then its destination.
    if (!acquire(plan, k, plan.x, plan.inplace, kView))
      Py_RETURN_NONE;
    const Py_buffer &kb = kView.buffer;
    if (kb.ndim != plan.rank || kb.shape[plan.rank - 1] != plan.headDim)
      Py_RETURN_NONE;
    for (int i = 0; i < plan.numTokenDims; ++i)
      if (kb.shape[plan.tokenDims[i]] != xb.shape[plan.tokenDims[i]])
        Py_RETURN_NONE;
    pass(kView);
    const View *destinationK = &kView;
    if (!plan.inplace) {
      if (!acquire(plan, outK, plan.x, true, outKView) ||
          !hasShape(outKView, kb.ndim, kb.shape) || overlaps(outKView, kView) ||
          overlaps(outKView, xView) || overlaps(outView, kView))
        Py_RETURN_NONE;
      pass(outKView);
      destinationK = &outKView;
    }
    if (overlaps(*destinationK, *destination) || overlapsInputs(*destinationK))
      Py_RETURN_NONE;
  }

  PyThreadState *state = PyEval_SaveThread();
  runKernel(plan.function, arguments, count);
  PyEval_RestoreThread(state);
  if (pair)
    return plan.inplace ? Py_BuildValue("(OO)", x, k)
                        : Py_BuildValue("(OO)", out, outK);
  PyObject *result = plan.inplace ? x : out;
  Py_INCREF(result);
  return result;
}

void deallocPlan(PyObject *self) {
  Plan *plan = reinterpret_cast<Plan *>(self);
  Py_XDECREF(plan->ndarrayType);
  for (Element *element :
       {&plan->x, &plan->position, &plan->rowOffset, &plan->cacheElement})
    Py_XDECREF(element->dtype);
  PyTypeObject *type = Py_TYPE(self);
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

PyType_Slot planSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(callPlan)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocPlan)},
    {Py_tp_doc,
     const_cast<char *>("A compiled rope.apply kernel's checked fast call.")},
    {0, nullptr}};

PyType_Spec planSpec = {"rope_mlir._kernel_call.Plan", sizeof(Plan), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                        planSlots};

/// A tuple of ints (or None) as a static shape.
bool readShape(PyObject *object, StaticShape &shape, const char *what) {
  if (object == Py_None)
    return true;
  if (!PyTuple_Check(object) || PyTuple_Size(object) > kMaxRank + 1) {
    PyErr_Format(PyExc_ValueError, "%s: a tuple of at most %d sizes", what,
                 kMaxRank + 1);
    return false;
  }
  shape.rank = static_cast<int>(PyTuple_Size(object));
  for (int i = 0; i < shape.rank; ++i) {
    shape.sizes[i] = PyLong_AsSsize_t(PyTuple_GetItem(object, i));
    if (shape.sizes[i] == -1 && PyErr_Occurred())
      return false;
  }
  return true;
}

/// A (dtype, itemsize) pair, or None.
bool readElement(PyObject *object, Element &element, const char *what) {
  if (object == Py_None)
    return true;
  PyObject *dtype;
  Py_ssize_t itemsize;
  if (!PyArg_ParseTuple(object, "On", &dtype, &itemsize))
    return false;
  if (itemsize <= 0) {
    PyErr_Format(PyExc_ValueError, "%s: itemsize must be positive", what);
    return false;
  }
  Py_INCREF(dtype);
  element.dtype = dtype;
  element.itemsize = itemsize;
  return true;
}

/// make_plan(function, ndarray, inplace, rank, head_dim, token_dims,
/// x_element, static_shape, positions_form, position_element, mrope,
/// static_positions_shape, row_offset_element, static_offset_shape,
/// cache_form, cache_element, pairs, static_cache_shape[, members]): a Plan
/// (members = 2: a q/k pair's kernel, see callPlan), or None
/// when the configuration is beyond what the fast path takes. Elements are
/// (numpy dtype, itemsize) pairs or None.
PyObject *makePlan(PyObject *module, PyObject *args) {
  unsigned long long function;
  PyObject *ndarray, *tokenDims, *xElement, *staticShape, *positionElement,
      *staticPositions, *rowOffsetElement, *staticOffset, *cacheElement,
      *staticCache;
  int inplace, rank, positions, mrope, cache, members = 1;
  Py_ssize_t headDim, pairs;
  if (!PyArg_ParseTuple(args, "KOpinOOOiOpOOOiOnO|i", &function, &ndarray,
                        &inplace, &rank, &headDim, &tokenDims, &xElement,
                        &staticShape, &positions, &positionElement, &mrope,
                        &staticPositions, &rowOffsetElement, &staticOffset,
                        &cache, &cacheElement, &pairs, &staticCache, &members))
    return nullptr;
  if (!function || !PyType_Check(ndarray) || !PyTuple_Check(tokenDims)) {
    PyErr_SetString(PyExc_ValueError, "make_plan: bad arguments");
    return nullptr;
  }
  Py_ssize_t numTokenDims = PyTuple_Size(tokenDims);
  if (rank < 1 || rank > kMaxRank || numTokenDims < 1 || numTokenDims >= rank ||
      positions < kExplicit || positions > kNone || cache < kNoCache ||
      cache > kPregathered || members < 1 || members > 2)
    Py_RETURN_NONE;

  PyTypeObject *type = reinterpret_cast<PyTypeObject *>(
      PyModule_GetState(module)
          ? *static_cast<PyObject **>(PyModule_GetState(module))
          : nullptr);
  if (!type) {
    PyErr_SetString(PyExc_RuntimeError, "make_plan: module not initialized");
    return nullptr;
  }
  auto alloc = reinterpret_cast<allocfunc>(PyType_GetSlot(type, Py_tp_alloc));
  PyObject *object = alloc(type, 0);
  if (!object)
    return nullptr;
  Plan *plan = reinterpret_cast<Plan *>(object);
  // The memory after the header is zeroed by tp_alloc; construct in place.
  new (&plan->staticShape) StaticShape();
  new (&plan->staticPositionsShape) StaticShape();
  new (&plan->staticOffsetShape) StaticShape();
  new (&plan->staticCacheShape) StaticShape();
  plan->function = reinterpret_cast<void *>(function);
  Py_INCREF(ndarray);
  plan->ndarrayType = ndarray;
  plan->inplace = inplace;
  plan->rank = rank;
  plan->headDim = headDim;
  plan->numTokenDims = static_cast<int>(numTokenDims);
  for (int i = 0; i < numTokenDims; ++i) {
    long dim = PyLong_AsLong(PyTuple_GetItem(tokenDims, i));
    if (dim == -1 && PyErr_Occurred()) {
      Py_DECREF(object);
      return nullptr;
    }
    if (dim < 0 || dim >= rank - 1) {
      Py_DECREF(object);
      Py_RETURN_NONE;
    }
    plan->tokenDims[i] = static_cast<int>(dim);
  }
  plan->positions = positions;
  plan->mrope = mrope;
  plan->cache = cache;
  plan->members = members;
  plan->pairs = pairs;
  if (!readElement(xElement, plan->x, "x_element") ||
      !readShape(staticShape, plan->staticShape, "static_shape") ||
      !readElement(positionElement, plan->position, "position_element") ||
      !readShape(staticPositions, plan->staticPositionsShape,
                 "static_positions_shape") ||
      !readElement(rowOffsetElement, plan->rowOffset, "row_offset_element") ||
      !readShape(staticOffset, plan->staticOffsetShape,
                 "static_offset_shape") ||
      !readElement(cacheElement, plan->cacheElement, "cache_element") ||
      !readShape(staticCache, plan->staticCacheShape, "static_cache_shape")) {
    Py_DECREF(object);
    return nullptr;
  }
  bool indexed = positions == kExplicit || positions == kRowOffset;
  Element &index = positions == kExplicit ? plan->position : plan->rowOffset;
  if (!plan->x.itemsize ||
      (cache != kNoCache && !plan->cacheElement.itemsize) ||
      (indexed && index.itemsize != 4 && index.itemsize != 8)) {
    PyErr_SetString(PyExc_ValueError, "make_plan: an element type is missing");
    Py_DECREF(object);
    return nullptr;
  }
  return object;
}

// -- run: a call on arguments the caller has checked ----------------------

// The most arguments run() takes (cache.AppendKernel: k, positions or an
// offset, cos, sin, k's norm weight and scale, slots, k_cache, v, v_scale,
// v_cache, q, q's norm weight, out_q).
constexpr int kMaxRunArguments = 16;

template <std::size_t... I>
void callWith(void *function, const std::intptr_t *a,
              std::index_sequence<I...>) {
  // Every argument is pointer-sized and of integer class, as in runKernel.
  using F = void (*)(decltype((void)I, std::intptr_t{})...);
  reinterpret_cast<F>(function)(a[I]...);
}

template <std::size_t... N>
void callCount(void *function, const std::intptr_t *a, int count,
               std::index_sequence<N...>) {
  ((count == static_cast<int>(N) + 1
        ? callWith(function, a, std::make_index_sequence<N + 1>())
        : void()),
   ...);
}

/// A held view of an exact numpy array that the compiled code may take as a
/// row-major memref: C-contiguous as numpy defines it (size-1 dims may have
/// any stride), aligned to its item size, rank <= kMaxRank. Empty arrays
/// are taken (their descriptor is never dereferenced).
bool acquireAny(PyObject *ndarrayType, PyObject *object, View &view) {
  if (reinterpret_cast<PyObject *>(Py_TYPE(object)) != ndarrayType)
    return false;
  if (PyObject_GetBuffer(object, &view.buffer, PyBUF_STRIDES) != 0) {
    PyErr_Clear();
    return false;
  }
  view.held = true;
  const Py_buffer &b = view.buffer;
  if (b.ndim > kMaxRank || b.itemsize <= 0 ||
      reinterpret_cast<std::uintptr_t>(b.buf) % b.itemsize != 0)
    return false;
  Py_ssize_t expected = b.itemsize;
  bool empty = false;
  for (int i = b.ndim - 1; i >= 0; --i) {
    empty |= b.shape[i] == 0;
    if (b.shape[i] > 1 && b.strides[i] != expected)
      return false;
    expected *= b.shape[i];
  }
  return empty || b.len == expected || b.ndim == 0;
}

/// run(function, ndarray, arguments): calls the compiled function at address
/// `function` with `arguments`, a tuple of exact numpy arrays (each passed
/// as its row-major memref descriptor, built here on the stack) and ints
/// (passed as int64), and returns True; returns False, running nothing, when
/// an argument is not one of those (another type, non-contiguous,
/// misaligned, rank > kMaxRank) or there are more than kMaxRunArguments:
/// the caller then builds ctypes descriptors. The caller has checked every
/// argument's dtype, shape, writeability and overlap (cache.AppendKernel,
/// mla.MLAKernel): this only saves the descriptors' construction.
PyObject *run(PyObject *, PyObject *args) {
  unsigned long long function;
  PyObject *ndarray, *arguments;
  if (!PyArg_ParseTuple(args, "KOO", &function, &ndarray, &arguments))
    return nullptr;
  if (!function || !PyTuple_Check(arguments)) {
    PyErr_SetString(PyExc_ValueError, "run: bad arguments");
    return nullptr;
  }
  Py_ssize_t count = PyTuple_Size(arguments);
  if (count < 1 || count > kMaxRunArguments)
    Py_RETURN_FALSE;
  View views[kMaxRunArguments];
  std::int64_t descriptors[kMaxRunArguments][3 + 2 * kMaxRank];
  std::intptr_t values[kMaxRunArguments];
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *argument = PyTuple_GetItem(arguments, i);
    if (Py_TYPE(argument) == &PyLong_Type) {
      int overflow = 0;
      long long value = PyLong_AsLongLongAndOverflow(argument, &overflow);
      if (overflow || (value == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        Py_RETURN_FALSE;
      }
      values[i] = static_cast<std::intptr_t>(value);
      continue;
    }
    if (!acquireAny(ndarray, argument, views[i]))
      Py_RETURN_FALSE;
    describe(views[i], descriptors[i]);
    values[i] = reinterpret_cast<std::intptr_t>(descriptors[i]);
  }
  callCount(reinterpret_cast<void *>(function), values, static_cast<int>(count),
            std::make_index_sequence<kMaxRunArguments>());
  Py_RETURN_TRUE;
}

// -- integer checks of slot computations (cache.py, mla.py) ---------------

/// A held C-contiguous exact numpy array of int32 or int64 (format i, l or
/// q), or false.
bool acquireIntegers(PyObject *ndarrayType, PyObject *object, View &view) {
  if (reinterpret_cast<PyObject *>(Py_TYPE(object)) != ndarrayType)
    return false;
  if (PyObject_GetBuffer(object, &view.buffer,
                         PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    return false;
  }
  view.held = true;
  const Py_buffer &b = view.buffer;
  const char *format = b.format ? b.format : "B";
  if (*format == '=' || *format == '<' || *format == '@')
    ++format;
  if (std::strlen(format) != 1 || std::strchr("ilq", *format) == nullptr)
    return false;
  return (b.itemsize == 4 || b.itemsize == 8) &&
         reinterpret_cast<std::uintptr_t>(b.buf) % b.itemsize == 0;
}

/// int_range(ndarray, a): (min, max) of a non-empty int32/int64 array in one
/// pass, or None (empty, or not such an array: numpy's min/max then).
PyObject *intRange(PyObject *, PyObject *args) {
  PyObject *ndarray, *object;
  if (!PyArg_ParseTuple(args, "OO", &ndarray, &object))
    return nullptr;
  View view;
  if (!acquireIntegers(ndarray, object, view) || view.buffer.len == 0)
    Py_RETURN_NONE;
  std::int64_t low, high;
  integerRange(view, low, high);
  return Py_BuildValue("(LL)", static_cast<long long>(low),
                       static_cast<long long>(high));
}

/// first_duplicate(ndarray, slots): the smallest value >= 0 held by two
/// elements of an int64 array, or None when there is none; NotImplemented
/// when `slots` is not a C-contiguous int64 array (numpy's check then).
PyObject *firstDuplicate(PyObject *, PyObject *args) {
  PyObject *ndarray, *object;
  if (!PyArg_ParseTuple(args, "OO", &ndarray, &object))
    return nullptr;
  View view;
  if (!acquireIntegers(ndarray, object, view) || view.buffer.itemsize != 8)
    Py_RETURN_NOTIMPLEMENTED;
  Py_ssize_t count = view.buffer.len / 8;
  const auto *values = static_cast<const std::int64_t *>(view.buffer.buf);
  constexpr Py_ssize_t kStack = 512;
  std::int64_t stack[kStack];
  std::int64_t *sorted = stack;
  if (count > kStack) {
    sorted = static_cast<std::int64_t *>(
        PyMem_Malloc(static_cast<std::size_t>(count) * 8));
    if (!sorted)
      return PyErr_NoMemory();
  }
  Py_ssize_t valid = 0;
  for (Py_ssize_t i = 0; i < count; ++i)
    if (values[i] >= 0)
      sorted[valid++] = values[i];
  std::sort(sorted, sorted + valid);
  PyObject *result = nullptr;
  for (Py_ssize_t i = 1; i < valid && !result; ++i)
    if (sorted[i] == sorted[i - 1])
      result = PyLong_FromLongLong(sorted[i]);
  if (sorted != stack)
    PyMem_Free(sorted);
  if (!result)
    Py_RETURN_NONE;
  return result;
}

PyMethodDef methods[] = {
    {"make_plan", makePlan, METH_VARARGS,
     "The checked fast call of one compiled kernel (see KernelCall.cpp)."},
    {"int_range", intRange, METH_VARARGS,
     "int_range(ndarray, a): (min, max) of an int32/int64 array, or None."},
    {"first_duplicate", firstDuplicate, METH_VARARGS,
     "first_duplicate(ndarray, slots): the smallest slot >= 0 given twice, "
     "None, or NotImplemented (not an int64 array)."},
    {"run", run, METH_VARARGS,
     "run(function, ndarray, arguments): a call on checked arguments, its "
     "descriptors built on the stack (see KernelCall.cpp)."},
    {nullptr, nullptr, 0, nullptr}};

int execModule(PyObject *module) {
  PyObject *type = PyType_FromModuleAndSpec(module, &planSpec, nullptr);
  if (!type)
    return -1;
  *static_cast<PyObject **>(PyModule_GetState(module)) = type;
  return PyModule_AddObjectRef(module, "Plan", type);
}

int traverseModule(PyObject *module, visitproc visit, void *arg) {
  PyObject *type = *static_cast<PyObject **>(PyModule_GetState(module));
  Py_VISIT(type);
  return 0;
}

int clearModule(PyObject *module) {
  PyObject **type = static_cast<PyObject **>(PyModule_GetState(module));
  Py_CLEAR(*type);
  return 0;
}

PyModuleDef_Slot moduleSlots[] = {
    {Py_mod_exec, reinterpret_cast<void *>(execModule)}, {0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "_kernel_call",
                         "The checked fast call of compiled rope kernels.",
                         sizeof(PyObject *),
                         methods,
                         moduleSlots,
                         traverseModule,
                         clearModule,
                         nullptr};

} // namespace

PyMODINIT_FUNC PyInit__kernel_call() { return PyModuleDef_Init(&moduleDef); }
