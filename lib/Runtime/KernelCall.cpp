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
// wrap int64, gathered positions inside the cache, not empty) and then runs
// it. What "exactly" means is not written here argument by argument:
// make_plan reads the function's ArgSpecs (python/rope_mlir/_kernel_path.py:
// name, dtype, static shape, shape rule, writeable, apart_from) and a few
// rotation facts once, and every check of a call is derived from them.
// Anything else makes it answer None, and the Python path takes the call: it
// converts what it may convert and raises the error that names the argument.
// So the error messages live in one place, and this path is only ever
// stricter than the one it speeds up (python/tests/api/test_kernel_call.py
// checks both on the same arguments); plan.refusal says which argument, by
// its spec's name, a plan declines.
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
// The most parameters of a planned function (a q/k pair: q, positions, cos,
// sin, out_q, k, out_k) and the most arguments of a plan's call.
constexpr int kMaxSpecs = 8;
constexpr int kMaxSlots = 8;

enum PositionForm { kExplicit = 0, kOffset = 1, kRowOffset = 2, kNone = 3 };
enum CacheForm { kNoCache = 0, kGathered = 1, kPregathered = 2 };
// What a call argument that no spec reads must be (Plan::absent); an index
// >= 0: the same object as that call argument (out=x, in place).
enum Absent { kRead = -1, kMustBeNone = -2, kMustBeZero = -3 };

/// An element type: the numpy dtype object (a strong reference) and its size.
struct Element {
  PyObject *dtype = nullptr;
  Py_ssize_t itemsize = 0;
};

/// One parameter of the compiled function, read from its ArgSpec
/// (_kernel_path.ArgSpec.plan_entry) once, when the plan is made.
struct Spec {
  PyObject *name = nullptr; // the ArgSpec's name (a strong reference)
  int slot = 0;             // the call argument that holds it
  bool scalar = false;      // an int64 by value; else a memref of `element`
  bool writeable = false;   // the kernel writes it
  Element element;
  int rank = 0;
  Py_ssize_t sizes[kMaxRank] = {}; // the static sizes; < 0: dynamic
  // The shape rule: per dim, the spec and dim whose size it must equal
  // (likeSpec < 0: none).
  int likeSpec[kMaxRank] = {};
  int likeDim[kMaxRank] = {};
  unsigned apart = 0; // bit j: it must not overlap spec j
};

/// A size one dim of a spec must share with a dim of another (its shape
/// rule), and two specs that must not overlap: the checks between a call's
/// arguments, listed once from the specs (listRules).
struct SizeRule {
  int spec, dim, other, otherDim;
};
struct Apart {
  int spec, other;
};

struct Plan {
  PyObject_HEAD void *function;
  PyObject *ndarrayType;
  PyObject *names; // the call's argument names (a tuple of str)
  PyObject *usage; // the TypeError of a call of the wrong form
  int numSlots;
  int absent[kMaxSlots]; // per call argument: kRead, or what it must be
  int numReturns;
  int returns[2]; // the call arguments returned
  int numSpecs;
  Spec specs[kMaxSpecs]; // the function's parameters, in order
  // The rotation facts: how the positions are given and read.
  int positions;                 // PositionForm
  int index;                     // the spec of positions or offsets, or -1
  int sequenceSpec, sequenceDim; // where the sequence length is
  int cache;                     // CacheForm
  int rows;                      // the spec of the cos cache, or -1
  // The checks between arguments, listed from the specs: the call
  // arguments no spec reads, the shape rules, the overlaps (each pair once).
  int numAbsent;
  int absentSlots[kMaxSlots];
  int numSizeRules;
  SizeRule sizeRules[kMaxSpecs * kMaxRank];
  int numAparts;
  Apart aparts[kMaxSpecs * (kMaxSpecs - 1) / 2];
};

/// Why a plan declines a call (Plan.refusal): the call argument concerned,
/// what is wrong, and the other argument (an overlap, an identity or a
/// shape rule) and dims (a shape rule) it is about.
struct Refusal {
  int slot = -1;
  const char *what = nullptr;
  int otherSlot = -1;
  int dim = -1, otherDim = -1;
};

bool refuse(Refusal &refusal, int slot, const char *what, int otherSlot = -1,
            int dim = -1, int otherDim = -1) {
  refusal.slot = slot;
  refusal.what = what;
  refusal.otherSlot = otherSlot;
  refusal.dim = dim;
  refusal.otherDim = otherDim;
  return false;
}

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

/// Why `object` is not an argument of `spec`, or nullptr when it is one,
/// held in `view`: an exact numpy array (no subclass, no other exporter: the
/// Python path decides about those) of the spec's element type and rank,
/// writeable when the spec is, C-contiguous as numpy defines it (size-1 dims
/// may have any stride), aligned to its item size, not empty, and of the
/// spec's static sizes. (The buffer is asked for without a format: numpy has
/// none for bfloat16.)
const char *acquire(const Plan &plan, PyObject *object, const Spec &spec,
                    View &view) {
  if (reinterpret_cast<PyObject *>(Py_TYPE(object)) != plan.ndarrayType)
    return "is not an exact numpy array";
  if (!hasDtype(object, spec.element.dtype))
    return "has another dtype";
  int flags = PyBUF_STRIDES | (spec.writeable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object, &view.buffer, flags) != 0) {
    PyErr_Clear(); // read-only for a destination: the Python path says so
    return spec.writeable ? "is not writeable" : "has no buffer";
  }
  view.held = true;
  const Py_buffer &b = view.buffer;
  if (b.itemsize != spec.element.itemsize)
    return "has another dtype";
  if (b.ndim != spec.rank)
    return "has another rank";
  if (reinterpret_cast<std::uintptr_t>(b.buf) % b.itemsize != 0)
    return "is misaligned";
  Py_ssize_t expected = b.itemsize;
  for (int i = b.ndim - 1; i >= 0; --i) {
    if (b.shape[i] == 0)
      return "is empty";
    if (b.shape[i] != 1 && b.strides[i] != expected)
      return "is not C-contiguous";
    expected *= b.shape[i];
  }
  for (int i = 0; i < spec.rank; ++i)
    if (spec.sizes[i] >= 0 && b.shape[i] != spec.sizes[i])
      return "is not of the static shape";
  return nullptr;
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

/// `object` as an int64 when it is an exact int that fits (not a bool, not
/// another type).
bool exactInt64(PyObject *object, long long &value) {
  if (Py_TYPE(object) != &PyLong_Type)
    return false;
  int overflow = 0;
  value = PyLong_AsLongLongAndOverflow(object, &overflow);
  if (value == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return overflow == 0;
}

template <std::size_t... I>
void callWith(void *function, const std::intptr_t *a,
              std::index_sequence<I...>) {
  // Every argument is pointer-sized and of integer class (descriptor
  // addresses, an int64 offset): the same registers whatever their C type.
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

/// A call's arguments once checked: the views held and the kernel's
/// arguments (descriptor addresses and int64 scalars), in parameter order.
struct Call {
  View views[kMaxSpecs];
  std::int64_t descriptors[kMaxSpecs][3 + 2 * kMaxRank];
  std::intptr_t arguments[kMaxSpecs];
  long long scalars[kMaxSpecs];
};

/// Whether `args` (the call's arguments, as many as the plan's names) is a
/// call the plan takes, every check derived from the specs: the call
/// arguments no spec reads (None, 0 or the same object as another), each
/// spec's type, dtype, rank, static sizes, layout and writeability, the
/// shape rules between specs, the overlaps each spec forbids (and between
/// any two it writes), then the rotation's facts: positions that do not wrap
/// int64 and, with a gathered cache, that are rows of it. Fills `call`; else
/// says why in `refusal`.
bool prepare(const Plan &plan, PyObject *args, Call &call, Refusal &refusal) {
  for (int a = 0; a < plan.numAbsent; ++a) {
    int s = plan.absentSlots[a];
    int rule = plan.absent[s];
    PyObject *object = PyTuple_GetItem(args, s);
    long long value;
    if (rule == kMustBeNone && object != Py_None)
      return refuse(refusal, s, "is not None");
    if (rule == kMustBeZero && !(exactInt64(object, value) && value == 0))
      return refuse(refusal, s, "is not the int 0");
    if (rule >= 0 && object != PyTuple_GetItem(args, rule))
      return refuse(refusal, s, "is not", rule);
  }
  for (int i = 0; i < plan.numSpecs; ++i) {
    const Spec &spec = plan.specs[i];
    PyObject *object = PyTuple_GetItem(args, spec.slot);
    if (spec.scalar) {
      if (!exactInt64(object, call.scalars[i]))
        return refuse(refusal, spec.slot, "is not an int that fits int64");
      call.arguments[i] = static_cast<std::intptr_t>(call.scalars[i]);
      continue;
    }
    if (const char *why = acquire(plan, object, spec, call.views[i]))
      return refuse(refusal, spec.slot, why);
    describe(call.views[i], call.descriptors[i]);
    call.arguments[i] = reinterpret_cast<std::intptr_t>(call.descriptors[i]);
  }
  for (int r = 0; r < plan.numSizeRules; ++r) {
    const SizeRule &rule = plan.sizeRules[r];
    if (call.views[rule.spec].buffer.shape[rule.dim] !=
        call.views[rule.other].buffer.shape[rule.otherDim])
      return refuse(refusal, plan.specs[rule.spec].slot, "has another size",
                    plan.specs[rule.other].slot, rule.dim, rule.otherDim);
  }
  for (int a = 0; a < plan.numAparts; ++a) {
    const Apart &apart = plan.aparts[a];
    if (overlaps(call.views[apart.spec], call.views[apart.other]))
      return refuse(refusal, plan.specs[apart.spec].slot, "overlaps",
                    plan.specs[apart.other].slot);
  }

  // The positions each token is rotated at: int64 (offset + sequence index
  // must not wrap) and, with a gathered cache, rows of it.
  std::int64_t low = 0, high = 0;
  Py_ssize_t sequence =
      call.views[plan.sequenceSpec].buffer.shape[plan.sequenceDim];
  int index = plan.index;
  switch (plan.positions) {
  case kExplicit:
    if (plan.cache == kGathered)
      integerRange(call.views[index], low, high);
    break;
  case kOffset:
    low = call.scalars[index];
    if (__builtin_add_overflow(low, sequence - 1, &high))
      return refuse(refusal, plan.specs[index].slot, "wraps int64");
    break;
  case kRowOffset:
    integerRange(call.views[index], low, high);
    if (__builtin_add_overflow(high, sequence - 1, &high))
      return refuse(refusal, plan.specs[index].slot, "wraps int64");
    break;
  default:
    break;
  }
  if (plan.cache == kGathered &&
      (low < 0 || high >= call.views[plan.rows].buffer.shape[0]))
    return refuse(refusal, plan.specs[index].slot, "reads rows outside",
                  plan.specs[plan.rows].slot);
  return true;
}

/// Whether the call has the plan's form; else a TypeError that says it.
bool hasForm(const Plan &plan, PyObject *args, PyObject *kwargs) {
  if (plan.function && !kwargs && PyTuple_Size(args) == plan.numSlots)
    return true;
  PyErr_SetObject(PyExc_TypeError, plan.usage);
  return false;
}

/// plan(*arguments), in the order of the plan's names (x, positions, offset,
/// cos_cache, sin_cache, out; a q/k pair's q, k, positions, offset,
/// cos_cache, sin_cache, out_q, out_k): the kernel run and its result (out,
/// or x in place; a pair's two), or None, running nothing, when the call
/// must take the Python path (see prepare).
PyObject *callPlan(PyObject *self, PyObject *args, PyObject *kwargs) {
  const Plan &plan = *reinterpret_cast<Plan *>(self);
  if (!hasForm(plan, args, kwargs))
    return nullptr;
  Call call;
  Refusal refusal;
  if (!prepare(plan, args, call, refusal))
    Py_RETURN_NONE;
  PyThreadState *state = PyEval_SaveThread();
  callCount(plan.function, call.arguments, plan.numSpecs,
            std::make_index_sequence<kMaxSpecs>());
  PyEval_RestoreThread(state);
  if (plan.numReturns == 2)
    return Py_BuildValue("(OO)", PyTuple_GetItem(args, plan.returns[0]),
                         PyTuple_GetItem(args, plan.returns[1]));
  PyObject *result = PyTuple_GetItem(args, plan.returns[0]);
  Py_INCREF(result);
  return result;
}

/// plan.refusal(*arguments): None when the plan would run the call, else
/// (name, why): the argument it declines, by its spec's name (the one the
/// Python path's message says), and why. Runs nothing.
PyObject *planRefusal(PyObject *self, PyObject *args) {
  const Plan &plan = *reinterpret_cast<Plan *>(self);
  if (!hasForm(plan, args, nullptr))
    return nullptr;
  Call call;
  Refusal refusal;
  if (prepare(plan, args, call, refusal))
    Py_RETURN_NONE;
  PyObject *name = PyTuple_GetItem(plan.names, refusal.slot);
  PyObject *other = refusal.otherSlot >= 0
                        ? PyTuple_GetItem(plan.names, refusal.otherSlot)
                        : nullptr;
  if (refusal.dim >= 0)
    return Py_BuildValue("(ON)", name,
                         PyUnicode_FromFormat("%s: dim %d is not %U's dim %d",
                                              refusal.what, refusal.dim, other,
                                              refusal.otherDim));
  if (other)
    return Py_BuildValue("(ON)", name,
                         PyUnicode_FromFormat("%s %U", refusal.what, other));
  return Py_BuildValue("(Os)", name, refusal.what);
}

void deallocPlan(PyObject *self) {
  Plan *plan = reinterpret_cast<Plan *>(self);
  Py_XDECREF(plan->ndarrayType);
  Py_XDECREF(plan->names);
  Py_XDECREF(plan->usage);
  for (int i = 0; i < kMaxSpecs; ++i) {
    Py_XDECREF(plan->specs[i].name);
    Py_XDECREF(plan->specs[i].element.dtype);
  }
  PyTypeObject *type = Py_TYPE(self);
  auto free = reinterpret_cast<freefunc>(PyType_GetSlot(type, Py_tp_free));
  free(self);
  Py_DECREF(type);
}

PyMethodDef planMethods[] = {
    {"refusal", planRefusal, METH_VARARGS,
     "refusal(*arguments): None when the plan takes the call, else (name, "
     "why) of the argument it declines. Runs nothing."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot planSlots[] = {
    {Py_tp_call, reinterpret_cast<void *>(callPlan)},
    {Py_tp_dealloc, reinterpret_cast<void *>(deallocPlan)},
    {Py_tp_methods, planMethods},
    {Py_tp_doc,
     const_cast<char *>("A compiled rope.apply kernel's checked fast call.")},
    {0, nullptr}};

PyType_Spec planSpec = {"rope_mlir._kernel_call.Plan", sizeof(Plan), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                        planSlots};

// -- make_plan: the specs read once ----------------------------------------

/// The position of `name` (a str) in the tuple `names`, or -1.
int find(PyObject *names, PyObject *name) {
  for (Py_ssize_t i = 0; i < PyTuple_Size(names); ++i) {
    int equal =
        PyObject_RichCompareBool(PyTuple_GetItem(names, i), name, Py_EQ);
    if (equal < 0)
      PyErr_Clear();
    if (equal == 1)
      return static_cast<int>(i);
  }
  return -1;
}

/// A spec's position by the name of its call argument; -1 with ValueError
/// when none reads it.
int specNamed(const Plan &plan, PyObject *name, const char *what) {
  int slot = PyUnicode_Check(name) ? find(plan.names, name) : -1;
  for (int i = 0; slot >= 0 && i < plan.numSpecs; ++i)
    if (plan.specs[i].slot == slot)
      return i;
  PyErr_Format(PyExc_ValueError, "make_plan: %s names no parameter: %R", what,
               name);
  return -1;
}

/// The entry of the `call` dict under `key`, or nullptr with KeyError.
PyObject *entry(PyObject *call, const char *key) {
  PyObject *value = PyDict_GetItemString(call, key);
  if (!value)
    PyErr_Format(PyExc_KeyError, "make_plan: the call has no %s", key);
  return value;
}

enum class Read { kFailed, kBeyond, kDone };

/// Lists the checks between a call's arguments from the resolved specs and
/// call (Plan::absentSlots, sizeRules, aparts), so that a call walks only
/// the rules there are: the shape rules in spec order, then the overlaps,
/// each unordered pair once (named by the spec that lists it first).
void listRules(Plan &plan) {
  for (int s = 0; s < plan.numSlots; ++s)
    if (plan.absent[s] != kRead)
      plan.absentSlots[plan.numAbsent++] = s;
  for (int i = 0; i < plan.numSpecs; ++i) {
    const Spec &spec = plan.specs[i];
    for (int d = 0; d < spec.rank && !spec.scalar; ++d)
      if (spec.likeSpec[d] >= 0)
        plan.sizeRules[plan.numSizeRules++] = {i, d, spec.likeSpec[d],
                                               spec.likeDim[d]};
  }
  for (int i = 0; i < plan.numSpecs; ++i)
    for (int j = 0; j < plan.numSpecs; ++j)
      if ((plan.specs[i].apart >> j & 1) &&
          !(j < i && (plan.specs[j].apart >> i & 1)))
        plan.aparts[plan.numAparts++] = {i, j};
}

/// Reads one spec entry, (name, element, shape, scalar, writeable,
/// apart_from, like), into `spec` (its name and slot; the rules by name are
/// resolved once every spec is read).
Read readSpec(Plan &plan, PyObject *item, Spec &spec) {
  PyObject *name, *element, *shape, *apart, *like;
  int scalar, writeable;
  if (!PyArg_ParseTuple(item, "UOOppOO", &name, &element, &shape, &scalar,
                        &writeable, &apart, &like))
    return Read::kFailed;
  Py_INCREF(name);
  spec.name = name;
  spec.slot = find(plan.names, name);
  if (spec.slot < 0) {
    PyErr_Format(PyExc_ValueError,
                 "make_plan: the call has no argument named %R", name);
    return Read::kFailed;
  }
  spec.scalar = scalar;
  spec.writeable = writeable;
  if (scalar)
    return Read::kDone;
  if (element == Py_None || shape == Py_None)
    return Read::kBeyond; // checked by the entry point: the Python path
  PyObject *dtype;
  Py_ssize_t itemsize;
  if (!PyArg_ParseTuple(element, "On", &dtype, &itemsize))
    return Read::kFailed;
  Py_INCREF(dtype);
  spec.element.dtype = dtype;
  spec.element.itemsize = itemsize;
  if (spec.element.itemsize <= 0 || !PyTuple_Check(shape) ||
      !PyTuple_Check(apart) || !PyTuple_Check(like)) {
    PyErr_SetString(PyExc_ValueError, "make_plan: a malformed spec");
    return Read::kFailed;
  }
  Py_ssize_t rank = PyTuple_Size(shape);
  if (rank < 1 || rank > kMaxRank)
    return Read::kBeyond;
  spec.rank = static_cast<int>(rank);
  for (int d = 0; d < spec.rank; ++d) {
    PyObject *size = PyTuple_GetItem(shape, d);
    spec.sizes[d] = size == Py_None ? -1 : PyLong_AsSsize_t(size);
    if (spec.sizes[d] == -1 && PyErr_Occurred())
      return Read::kFailed;
    spec.likeSpec[d] = -1;
  }
  return Read::kDone;
}

/// Resolves spec `i`'s rules by name: like (per dim, None or (name, dim))
/// and apart_from (names, or "*": every parameter the kernel only reads).
/// Any two specs the kernel writes must be apart too.
bool resolveRules(Plan &plan, int i, PyObject *apart, PyObject *like) {
  Spec &spec = plan.specs[i];
  if (spec.scalar)
    return true;
  Py_ssize_t count = PyTuple_Size(like);
  if (count != 0 && count != spec.rank) {
    PyErr_Format(PyExc_ValueError, "make_plan: %U's like has %zd dims, not %d",
                 spec.name, count, spec.rank);
    return false;
  }
  for (int d = 0; d < count; ++d) {
    PyObject *rule = PyTuple_GetItem(like, d);
    if (rule == Py_None)
      continue;
    PyObject *other;
    int dim;
    if (!PyArg_ParseTuple(rule, "Oi", &other, &dim))
      return false;
    int j = specNamed(plan, other, "like");
    if (j < 0)
      return false;
    if (plan.specs[j].scalar || dim < 0 || dim >= plan.specs[j].rank) {
      PyErr_Format(PyExc_ValueError, "make_plan: %U has no dim %d", other, dim);
      return false;
    }
    spec.likeSpec[d] = j;
    spec.likeDim[d] = dim;
  }
  for (Py_ssize_t k = 0; k < PyTuple_Size(apart); ++k) {
    PyObject *other = PyTuple_GetItem(apart, k);
    if (PyUnicode_Check(other) &&
        PyUnicode_CompareWithASCIIString(other, "*") == 0) {
      for (int j = 0; j < plan.numSpecs; ++j)
        if (!plan.specs[j].writeable)
          spec.apart |= 1u << j;
      continue;
    }
    int j = specNamed(plan, other, "apart_from");
    if (j < 0)
      return false;
    spec.apart |= 1u << j;
  }
  for (int j = 0; j < plan.numSpecs; ++j)
    if (spec.writeable && plan.specs[j].writeable)
      spec.apart |= 1u << j;
  spec.apart &= ~(1u << i);
  for (int j = 0; j < plan.numSpecs; ++j)
    if (plan.specs[j].scalar)
      spec.apart &= ~(1u << j); // by value: nothing to overlap
  return true;
}

/// Reads the call: its argument names and usage, what each argument no spec
/// reads must be, what it returns, and the rotation facts.
Read readCall(Plan &plan, PyObject *call) {
  PyObject *absent = entry(call, "absent"), *returns = entry(call, "returns"),
           *sequence = entry(call, "sequence"), *index = entry(call, "index"),
           *rows = entry(call, "rows"), *positions = entry(call, "positions"),
           *cache = entry(call, "cache");
  if (!absent || !returns || !sequence || !index || !rows || !positions ||
      !cache)
    return Read::kFailed;
  if (!PyDict_Check(absent) || !PyTuple_Check(returns) ||
      PyTuple_Size(returns) < 1 || PyTuple_Size(returns) > 2) {
    PyErr_SetString(PyExc_ValueError, "make_plan: a malformed call");
    return Read::kFailed;
  }
  for (int s = 0; s < plan.numSlots; ++s) {
    bool read = false;
    for (int i = 0; i < plan.numSpecs; ++i)
      read |= plan.specs[i].slot == s;
    plan.absent[s] = kRead;
    if (read)
      continue;
    PyObject *name = PyTuple_GetItem(plan.names, s);
    PyObject *rule = PyDict_GetItemWithError(absent, name);
    if (!rule) {
      if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError,
                     "make_plan: no spec reads %R and absent has no rule",
                     name);
      return Read::kFailed;
    }
    if (rule == Py_None) {
      plan.absent[s] = kMustBeNone;
    } else if (PyLong_Check(rule) && PyLong_AsLong(rule) == 0) {
      plan.absent[s] = kMustBeZero;
    } else if (PyUnicode_Check(rule) && find(plan.names, rule) >= 0) {
      plan.absent[s] = find(plan.names, rule);
    } else {
      PyErr_Format(PyExc_ValueError, "make_plan: bad absent rule for %R", name);
      return Read::kFailed;
    }
  }
  plan.numReturns = static_cast<int>(PyTuple_Size(returns));
  for (int r = 0; r < plan.numReturns; ++r) {
    plan.returns[r] = find(plan.names, PyTuple_GetItem(returns, r));
    if (plan.returns[r] < 0) {
      PyErr_SetString(PyExc_ValueError, "make_plan: returns names no "
                                        "argument of the call");
      return Read::kFailed;
    }
  }
  plan.positions = static_cast<int>(PyLong_AsLong(positions));
  plan.cache = static_cast<int>(PyLong_AsLong(cache));
  if (PyErr_Occurred())
    return Read::kFailed;
  if (plan.positions < kExplicit || plan.positions > kNone ||
      plan.cache < kNoCache || plan.cache > kPregathered)
    return Read::kBeyond;
  PyObject *sequenceName;
  if (!PyArg_ParseTuple(sequence, "Oi", &sequenceName, &plan.sequenceDim))
    return Read::kFailed;
  plan.sequenceSpec = specNamed(plan, sequenceName, "sequence");
  if (plan.sequenceSpec < 0)
    return Read::kFailed;
  const Spec &sequenceSpec = plan.specs[plan.sequenceSpec];
  plan.index = index == Py_None ? -1 : specNamed(plan, index, "index");
  plan.rows = rows == Py_None ? -1 : specNamed(plan, rows, "rows");
  if ((index != Py_None && plan.index < 0) ||
      (rows != Py_None && plan.rows < 0))
    return Read::kFailed;
  bool indexed = plan.positions != kNone;
  bool scalarIndex = plan.positions == kOffset;
  if (plan.cache == kGathered && !indexed)
    return Read::kBeyond; // rows gathered at no positions: not a rotation
  if (sequenceSpec.scalar || plan.sequenceDim < 0 ||
      plan.sequenceDim >= sequenceSpec.rank || indexed != (plan.index >= 0) ||
      (plan.cache == kGathered) != (plan.rows >= 0) ||
      (plan.rows >= 0 && plan.specs[plan.rows].scalar) ||
      (indexed &&
       (plan.specs[plan.index].scalar != scalarIndex ||
        (!scalarIndex && plan.specs[plan.index].element.itemsize != 4 &&
         plan.specs[plan.index].element.itemsize != 8)))) {
    PyErr_SetString(PyExc_ValueError,
                    "make_plan: the rotation facts disagree with the specs");
    return Read::kFailed;
  }
  return Read::kDone;
}

/// make_plan(function, ndarray, specs, call): the checked fast call of the
/// compiled function at address `function`, or None when it is beyond what
/// the fast path takes (a spec without a dtype or shape, rank > kMaxRank,
/// too many parameters). `specs` are the function's parameters in order, as
/// ArgSpec.plan_entry gives them: (name, (dtype, itemsize) or None, static
/// shape (None: a dynamic size), scalar, writeable, apart_from (names, "*":
/// every parameter the kernel only reads), like (per dim, None or (name,
/// dim): the size it must equal)). `call` is a dict: names (the call's
/// arguments, in order; each spec's name is one), usage (the TypeError of a
/// call of another form), absent (for each argument no spec reads: None, 0,
/// or the name of the argument it must be), returns (one or two names), and
/// the rotation facts: positions and cache (their forms), index (the spec
/// of the positions or offsets, or None), sequence ((name, dim): where the
/// sequence length is) and rows (the spec of the gathered cache, or None).
/// Everything is read here, once; a call only compares.
PyObject *makePlan(PyObject *module, PyObject *args) {
  unsigned long long function;
  PyObject *ndarray, *specs, *call;
  if (!PyArg_ParseTuple(args, "KOOO", &function, &ndarray, &specs, &call))
    return nullptr;
  PyObject *names = PyDict_Check(call) ? entry(call, "names") : nullptr;
  PyObject *usage = names ? entry(call, "usage") : nullptr;
  if (!function || !PyType_Check(ndarray) || !PyTuple_Check(specs) || !usage ||
      !PyTuple_Check(names) || !PyUnicode_Check(usage)) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "make_plan: bad arguments");
    return nullptr;
  }
  Py_ssize_t numSpecs = PyTuple_Size(specs), numSlots = PyTuple_Size(names);
  if (numSpecs < 1 || numSpecs > kMaxSpecs || numSlots > kMaxSlots)
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
  for (Spec &spec : plan->specs)
    new (&spec) Spec();
  plan->function = reinterpret_cast<void *>(function);
  Py_INCREF(ndarray);
  plan->ndarrayType = ndarray;
  Py_INCREF(names);
  plan->names = names;
  Py_INCREF(usage);
  plan->usage = usage;
  plan->numSlots = static_cast<int>(numSlots);
  plan->numSpecs = static_cast<int>(numSpecs);
  Read read = Read::kDone;
  for (int i = 0; i < numSpecs && read == Read::kDone; ++i)
    read = readSpec(*plan, PyTuple_GetItem(specs, i), plan->specs[i]);
  for (int i = 0; i < numSpecs && read == Read::kDone; ++i) {
    PyObject *item = PyTuple_GetItem(specs, i);
    if (!resolveRules(*plan, i, PyTuple_GetItem(item, 5),
                      PyTuple_GetItem(item, 6)))
      read = Read::kFailed;
  }
  if (read == Read::kDone)
    read = readCall(*plan, call);
  if (read == Read::kDone)
    listRules(*plan);
  if (read != Read::kDone) {
    Py_DECREF(object);
    if (read == Read::kFailed)
      return nullptr;
    Py_RETURN_NONE;
  }
  return object;
}

// -- run: a call on arguments the caller has checked ----------------------

// The most arguments run() takes (cache.AppendKernel: k, positions or an
// offset, cos, sin, k's norm weight and scale, slots, k_cache, v, v_scale,
// v_cache, q, q's norm weight, out_q).
constexpr int kMaxRunArguments = 16;

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
