// RUN: mlir-opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(convert-rope-to-linalg)" | FileCheck %s --check-prefix=LOWER
// RUN: mlir-opt %s --load-dialect-plugin=%rope_plugin | mlir-opt --load-dialect-plugin=%rope_plugin | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: mlir-opt %s --load-dialect-plugin=%rope_plugin --load-pass-plugin=%rope_plugin --pass-pipeline="builtin.module(rope-to-llvm-cpu)" | FileCheck %s --check-prefix=LLVM
// RUN: not mlir-opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// The stock mlir-opt, with rope-mlir loaded as a dialect and pass plugin,
// parses, prints and lowers rope IR, and runs the named CPU pipeline. Without the plugin it does not know the
// dialect.

// LOWER-LABEL: func.func @apply(
//   LOWER-NOT:   rope.apply
//       LOWER:   linalg.generic
//       LOWER:     math.cos
//       LOWER:     math.sin
//       LOWER:   linalg.generic
//       LOWER:   tensor.collapse_shape
//   LOWER-NOT:   rope.apply

// ROUNDTRIP-LABEL: func.func @apply(
//       ROUNDTRIP:   rope.apply ins(%{{.*}} : tensor<2x8x4x64xf32>) positions(%{{.*}} : tensor<2x8xi64>) outs(%{{.*}} : tensor<2x8x4x64xf32>)
//  ROUNDTRIP-SAME:     {freqs = #rope.default<base = 5.000000e+05>, layout = #rope.layout<interleaved>} -> tensor<2x8x4x64xf32>

//   LLVM-NOT: rope.apply
// LLVM-LABEL: llvm.func @apply(
//       LLVM:   llvm.intr.roundeven({{.*}}) : (vector<{{[0-9]+}}xf64>)
//       LLVM:   llvm.store {{.*}} : vector<{{[0-9]+}}xf32>
//   LLVM-NOT: rope.apply

// NOPLUGIN: Dialect `rope' not found for custom op 'rope.apply'

func.func @apply(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%init : tensor<2x8x4x64xf32>)
         {layout = #rope.layout<interleaved>, freqs = #rope.default<base = 500000.0>} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}
