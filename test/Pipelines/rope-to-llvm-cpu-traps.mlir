// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{runtime-traps=true})" | FileCheck %s --check-prefix=TRAPS
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu)" | FileCheck %s --check-prefix=ABORT
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{checked=true runtime-traps=true})" | FileCheck %s --check-prefix=CHECKED

// A size from the caller is checked before it is allocated. With
// runtime-traps the failure calls the rope runtime (an exception in
// Python); without, upstream's cf.assert lowering prints and aborts.
// TRAPS-LABEL: llvm.func @fill(
//       TRAPS:   llvm.call @ropeRuntimeTrap
//       TRAPS:   llvm.unreachable
//       TRAPS:   llvm.call @malloc
// ABORT-LABEL: llvm.func @fill(
//   ABORT-NOT:   ropeRuntimeTrap
//       ABORT:   llvm.call @malloc
//       ABORT:   llvm.call @abort
func.func @fill(%n: index) -> tensor<?xf32> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.fill ins(%c : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// checked=true: the index of a tensor.extract is checked against the
// tensor's size (generate-runtime-verification), unchecked code has no such
// test.
// CHECKED-LABEL: llvm.func @extract(
//       CHECKED:   llvm.icmp "slt"
//       CHECKED:   llvm.call @ropeRuntimeTrap
// TRAPS-LABEL: llvm.func @extract(
//   TRAPS-NOT:   llvm.call @ropeRuntimeTrap
//       TRAPS:   llvm.return
func.func @extract(%t: tensor<?xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<?xf32>
  return %v : f32
}
