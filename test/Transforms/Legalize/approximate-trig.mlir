// RUN: rope-opt %s --rope-approximate-trig -split-input-file | FileCheck %s --enable-var-scope

// f32 sin/cos, scalar and vector, become polynomials (range reduction with
// floor, a chain of FMAs); no libm call is left.

// CHECK-LABEL: func.func @f32_scalar(
//  CHECK-SAME:     %[[A:[^:]*]]: f32)
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   math.floor %{{.*}} : f32
//       CHECK:   math.fma {{.*}} : f32
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   math.floor %{{.*}} : f32
//       CHECK:   math.fma {{.*}} : f32
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   return %{{.*}}, %{{.*}} : f32, f32
func.func @f32_scalar(%a: f32) -> (f32, f32) {
  %s = math.sin %a : f32
  %c = math.cos %a : f32
  return %s, %c : f32, f32
}

// -----

// CHECK-LABEL: func.func @f32_vector(
//  CHECK-SAME:     %[[V:[^:]*]]: vector<8xf32>)
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   math.floor %{{.*}} : vector<8xf32>
//       CHECK:   math.fma {{.*}} : vector<8xf32>
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   math.floor %{{.*}} : vector<8xf32>
//       CHECK:   math.fma {{.*}} : vector<8xf32>
//   CHECK-NOT:   math.sin
//   CHECK-NOT:   math.cos
//       CHECK:   return %{{.*}}, %{{.*}} : vector<8xf32>, vector<8xf32>
func.func @f32_vector(%v: vector<8xf32>) -> (vector<8xf32>, vector<8xf32>) {
  %s = math.sin %v : vector<8xf32>
  %c = math.cos %v : vector<8xf32>
  return %s, %c : vector<8xf32>, vector<8xf32>
}

// -----

// f64 sin/cos (scalar and vector) are left alone: the polynomials are f32
// only, and f64 data needs the full-precision libm result.

// CHECK-LABEL: func.func @f64_kept(
//  CHECK-SAME:     %[[D:[^:]*]]: f64, %[[DV:[^:]*]]: vector<4xf64>)
//   CHECK-NOT:   math.fma
//       CHECK:   %[[S:.*]] = math.sin %[[D]] : f64
//  CHECK-NEXT:   %[[C:.*]] = math.cos %[[DV]] : vector<4xf64>
//  CHECK-NEXT:   return %[[S]], %[[C]] : f64, vector<4xf64>
func.func @f64_kept(%d: f64, %dv: vector<4xf64>) -> (f64, vector<4xf64>) {
  %s = math.sin %d : f64
  %c = math.cos %dv : vector<4xf64>
  return %s, %c : f64, vector<4xf64>
}

// -----

// Other math ops, even f32 ones that upstream can approximate, are untouched.

// CHECK-LABEL: func.func @others_untouched(
//  CHECK-SAME:     %[[A:[^:]*]]: f32, %[[V:[^:]*]]: vector<8xf32>)
//  CHECK-NEXT:   %[[E:.*]] = math.exp %[[A]] : f32
//  CHECK-NEXT:   %[[T:.*]] = math.tanh %[[A]] : f32
//  CHECK-NEXT:   %[[L:.*]] = math.log %[[V]] : vector<8xf32>
//  CHECK-NEXT:   %[[R:.*]] = math.erf %[[V]] : vector<8xf32>
//  CHECK-NEXT:   %[[F:.*]] = math.fma %[[A]], %[[A]], %[[A]] : f32
//  CHECK-NEXT:   return %[[E]], %[[T]], %[[L]], %[[R]], %[[F]]
func.func @others_untouched(%a: f32, %v: vector<8xf32>) -> (f32, f32, vector<8xf32>, vector<8xf32>, f32) {
  %e = math.exp %a : f32
  %t = math.tanh %a : f32
  %l = math.log %v : vector<8xf32>
  %r = math.erf %v : vector<8xf32>
  %f = math.fma %a, %a, %a : f32
  return %e, %t, %l, %r, %f : f32, f32, vector<8xf32>, vector<8xf32>, f32
}

// -----

// Mixed: in one function only the f32 ones are replaced.

// CHECK-LABEL: func.func @mixed(
//  CHECK-SAME:     %[[A:[^:]*]]: f32, %[[D:[^:]*]]: f64)
//   CHECK-NOT:   math.sin %[[A]]
//       CHECK:   math.sin %[[D]] : f64
//   CHECK-NOT:   math.sin
//       CHECK:   return
func.func @mixed(%a: f32, %d: f64) -> (f32, f64) {
  %s = math.sin %a : f32
  %t = math.sin %d : f64
  return %s, %t : f32, f64
}
