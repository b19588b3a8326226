// RUN: rope-opt %s --rope-lower-asserts-to-traps -split-input-file -verify-diagnostics | FileCheck %s --enable-var-scope

// A failed assert calls the runtime's trap with its message instead of
// printing and aborting: kind 2 for a check, 1 for an allocation
// (rope.trap = "out-of-memory").
// CHECK-DAG:   llvm.func @ropeRuntimeTrap(i32, !llvm.ptr)
// CHECK-DAG:   llvm.mlir.global internal constant @rope_trap_message_0("index out of bounds\00")
// CHECK-DAG:   llvm.mlir.global internal constant @rope_trap_message_1("out of memory: n\00")
// CHECK-LABEL: func.func @check(
//  CHECK-SAME:   %[[OK:.*]]: i1, %[[FITS:.*]]: i1)
//       CHECK:   cf.cond_br %[[OK]], ^[[NEXT:.*]], ^[[FAIL:[a-z0-9]+]]
//       CHECK: ^[[FAIL]]:
//       CHECK:   %[[MESSAGE:.*]] = llvm.mlir.addressof @rope_trap_message_0
//       CHECK:   %[[KIND:.*]] = llvm.mlir.constant(2 : i32) : i32
//       CHECK:   llvm.call @ropeRuntimeTrap(%[[KIND]], %{{.*}}) : (i32, !llvm.ptr) -> ()
//       CHECK:   llvm.unreachable
//       CHECK: ^[[NEXT]]:
//       CHECK:   cf.cond_br %[[FITS]], ^[[NEXT2:.*]], ^[[FAIL2:[a-z0-9]+]]
//       CHECK: ^[[FAIL2]]:
//       CHECK:   llvm.mlir.addressof @rope_trap_message_1
//       CHECK:   llvm.mlir.constant(1 : i32) : i32
//       CHECK:   llvm.call @ropeRuntimeTrap
//       CHECK: ^[[NEXT2]]:
//   CHECK-NOT:   cf.assert
//       CHECK:   return
func.func @check(%ok: i1, %fits: i1) {
  cf.assert %ok, "index out of bounds"
  cf.assert %fits, "out of memory: n" {rope.trap = "out-of-memory"}
  return
}

// -----

// The trap's name is the runtime's: a module that defines it otherwise is
// refused rather than called with the wrong arguments.
// expected-error @+1 {{@ropeRuntimeTrap is the rope runtime's trap: the module must not define it otherwise}}
func.func private @ropeRuntimeTrap(i64)
func.func @clash(%ok: i1) {
  cf.assert %ok, "x"
  return
}
