// RUN: rope-opt %s --rope-to-llvm-cpu="outline-max-ops=20" | FileCheck %s
// RUN: rope-opt %s --rope-to-llvm-cpu="outline-max-ops=0" | FileCheck %s --check-prefix=WHOLE
// RUN: rope-opt %s --rope-to-llvm-cpu | FileCheck %s --check-prefix=WHOLE

// rope-to-llvm-cpu hands LLVM a body of more than outline-max-ops operations
// in chunks (rope-outline-chunks): internal functions LLVM must not inline
// back, called in order. The default (2000) leaves a small function whole.

// CHECK:     llvm.func @steps(
// CHECK:       llvm.call @steps__chunk0(
// CHECK:       llvm.call @steps__chunk1(
// CHECK:     llvm.func internal @steps__chunk0(
// CHECK-SAME:  passthrough = ["noinline"]
// CHECK:     llvm.func internal @steps__chunk1(
// WHOLE:     llvm.func @steps(
// WHOLE-NOT: __chunk
func.func @steps(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %a = linalg.add ins(%x, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %b = linalg.mul ins(%a, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %c = math.exp %b : tensor<64xf32>
  %d = linalg.sub ins(%c, %a : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %f = linalg.div ins(%d, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %f : tensor<64xf32>
}
