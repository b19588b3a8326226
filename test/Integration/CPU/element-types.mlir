// RUN: rope-opt %s --rope-to-llvm-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// f16 and bf16 data are rotated in f32 and rounded once; f64 data is rotated
// in f64. x = (1, 0) at positions 1 and 2 gives (cos p, sin p) rounded to the
// data type:
//   f16:  cos 1 = 0.540527, sin 1 = 0.841309, cos 2 = -0.41626, sin 2 = 0.90918
//   bf16: cos 1 = 0.539062, sin 1 = 0.839844, cos 2 = -0.416016, sin 2 = 0.910156

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefF64(tensor<*xf64>)

func.func @main() {
  %p = arith.constant dense<[1, 2]> : tensor<2xi64>

  %x16 = arith.constant dense<[[1.0, 0.0], [1.0, 0.0]]> : tensor<2x2xf16>
  %i16 = tensor.empty() : tensor<2x2xf16>
  %y16 = rope.apply ins(%x16 : tensor<2x2xf16>) positions(%p : tensor<2xi64>) outs(%i16 : tensor<2x2xf16>) -> tensor<2x2xf16>
  %e16 = arith.extf %y16 : tensor<2x2xf16> to tensor<2x2xf32>
  %u16 = tensor.cast %e16 : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}0.540527, 0.841309],
  // CHECK-NEXT: [-0.41626, 0.90918]]

  %xb = arith.constant dense<[[1.0, 0.0], [1.0, 0.0]]> : tensor<2x2xbf16>
  %ib = tensor.empty() : tensor<2x2xbf16>
  %yb = rope.apply ins(%xb : tensor<2x2xbf16>) positions(%p : tensor<2xi64>) outs(%ib : tensor<2x2xbf16>) -> tensor<2x2xbf16>
  %eb = arith.extf %yb : tensor<2x2xbf16> to tensor<2x2xf32>
  %ub = tensor.cast %eb : tensor<2x2xf32> to tensor<*xf32>
  call @printMemrefF32(%ub) : (tensor<*xf32>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}0.539062, 0.839844],
  // CHECK-NEXT: [-0.416016, 0.910156]]

  %x64 = arith.constant dense<[[1.0, 0.0], [1.0, 0.0]]> : tensor<2x2xf64>
  %i64 = tensor.empty() : tensor<2x2xf64>
  %y64 = rope.apply ins(%x64 : tensor<2x2xf64>) positions(%p : tensor<2xi64>) outs(%i64 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %u64 = tensor.cast %y64 : tensor<2x2xf64> to tensor<*xf64>
  call @printMemrefF64(%u64) : (tensor<*xf64>) -> ()
  // CHECK: sizes = [2, 2]
  // CHECK-NEXT: {{\[\[}}0.540302, 0.841471],
  // CHECK-NEXT: [-0.416147, 0.909297]]
  return
}
