// RUN: mlir-opt %S/../Frontends/Inputs/llama_computed.mlir --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(rope-optimize)" | FileCheck %s
// RUN: mlir-opt %S/../Frontends/Inputs/llama_computed.mlir --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(rope-raise{remarks=true})" 2>&1 | FileCheck %s --check-prefix=RAISE
// RUN: mlir-opt %S/../Frontends/Inputs/llama_computed.mlir --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(rope-optimize{portable=true})" | FileCheck %s --check-prefix=PORTABLE

// The stock mlir-opt with the plugin runs the pipeline a compiler inserts
// ahead of its own lowering on torch-mlir's output: the Llama rotation is
// raised, the frontend's cos/sin computation is gone.

// CHECK-LABEL: func.func @main(
// CHECK-NOT: math.cos
// CHECK-COUNT-2: rope.apply
// CHECK-NOT: math.sin
// CHECK: return

// RAISE-NOT: remark
// RAISE-COUNT-2: rope.apply

// The portable route through the plugin (docs/IREE.md): upstream dialects
// only, the angle from i64 phase steps.
// PORTABLE-LABEL: func.func @main(
// PORTABLE-NOT: rope.
// PORTABLE: arith.muli {{.*}} : i64
// PORTABLE-NOT: rope.
// PORTABLE: math.cos
// PORTABLE-NOT: rope.
// PORTABLE: return
