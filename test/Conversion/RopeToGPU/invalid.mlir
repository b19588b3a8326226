// RUN: not rope-opt %s --convert-rope-to-gpu="block-size=0" 2>&1 | FileCheck %s
// RUN: not rope-opt %s --convert-rope-to-gpu="max-blocks=0" 2>&1 | FileCheck %s

// A launch needs at least one thread and one block.
// CHECK: block-size and max-blocks must be >= 1
func.func @apply(%x: tensor<8x4x64xf32>, %p: tensor<8xi64>, %init: tensor<8x4x64xf32>) -> tensor<8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<8x4x64xf32>) positions(%p : tensor<8xi64>) outs(%init : tensor<8x4x64xf32>) -> tensor<8x4x64xf32>
  return %y : tensor<8x4x64xf32>
}

// The pass extends its module's symbol table (the frequency tables), so it
// runs on modules only: nested under a function it is refused.
// RUN: not rope-opt %s --pass-pipeline="builtin.module(func.func(convert-rope-to-gpu))" 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: Can't add pass 'ConvertRopeToGPUPass' restricted to 'builtin.module' on a PassManager intended to run on 'func.func'
