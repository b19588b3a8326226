// RUN: rope-opt %S/../Frontends/Inputs/attention/hf_llama_sdpa.mlir --rope-optimize=portable=true | FileCheck %s
// RUN: rope-opt %S/../Frontends/Inputs/zoo/qwen3_decode.mlir --rope-optimize=portable=true | FileCheck %s --check-prefix=ZOO
// RUN: rope-opt %S/../Frontends/Inputs/attention/hf_llama_sdpa.mlir --rope-optimize | FileCheck %s --check-prefix=TILED

// --rope-optimize=portable=true (issue 34; docs/IREE.md): what another
// compiler takes with its default flags. Everything is raised as by
// --rope-optimize, then lowered into upstream linalg on tensors: no rope
// op, no loops of ours (IREE forms its own dispatches; a top-level
// scf.forall of tensors crashed its stream analysis), and the rotation's
// angle formed without f64 (IREE demotes f64 to f32 by default): the i64
// phase steps of the HF table (theta_0 = 1: 716770142402832) times the
// position, then f32.
// CHECK-LABEL: func.func @main
// CHECK-NOT: rope.
// CHECK-NOT: scf.forall
// CHECK-NOT: f64
// CHECK: arith.constant dense<[716770142402832,
// CHECK-NOT: rope.
// CHECK-NOT: scf.forall
// CHECK-NOT: f64
// CHECK: arith.muli {{.*}} : i64
// CHECK-NOT: rope.
// CHECK-NOT: scf.forall
// CHECK-NOT: f64
// CHECK: math.exp
// CHECK-NOT: rope.
// CHECK-NOT: scf.forall
// CHECK-NOT: f64
// CHECK: return
// A whole decode step with QK-norm and a KV cache.
// ZOO-LABEL: func.func @main
// ZOO-NOT: rope.
// ZOO-NOT: scf.forall
// ZOO: arith.muli {{.*}} : i64
// ZOO-NOT: rope.
// ZOO-NOT: scf.forall
// ZOO: return
// Without the option: the tiled FlashAttention loops with the rotations
// fused (for our own lowering).
// TILED: scf.forall
