// RUN: rope-opt --rope-raise --split-input-file %s | FileCheck %s
// RUN: rope-opt --rope-raise=remarks=true --split-input-file %s 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=REMARK

// Sizes the raise proves equal through upstream's value bounds (a slice of
// the whole of a dynamic dim, spelled by another tensor's tensor.dim) are
// asked through GuardedValueBounds: `tensor.dim` with a constant index
// outside its source's rank verifies, and upstream's bounds of it read the
// shape past its end (the fuzzer's crash in ValueBoundsConstraintSet::getExpr
// from isWholeDim). Such a size is simply not proven; the rotation that
// reads it is left alone, with a remark.
// REMARK-COUNT-3: remark: rope-raise: not raised
// REMARK-NOT: remark

#p3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#f3 = affine_map<(d0, d1, d2) -> (d2)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// Control: the size of the rotated half is the tensor.dim of another
// tensor made from the same sizes; only value bounds prove it whole.
// CHECK-LABEL: func.func @size_proven_by_bounds(
// CHECK: rope.apply
func.func @size_proven_by_bounds(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x2x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x2x8xf32>
  %e3x = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %other = tensor.dim %e3x, %c0 : tensor<?x?x4xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e3 = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %ang = linalg.generic {indexing_maps = [#p3, #f3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<?x?xi64>, tensor<4xf32>) outs(%e3 : tensor<?x?x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<?x?x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
  %e8 = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<?x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sv = math.sin %a : f32
    linalg.yield %sv : f32
  } -> tensor<?x?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%other, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %e4 = tensor.empty(%b, %s) : tensor<?x?x2x4xf32>
  %n = linalg.negf ins(%x2 : tensor<?x?x2x4xf32>) outs(%e4 : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  %rot = tensor.concat dim(3) %n, %x1 : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x8xf32>
  %ey = tensor.empty(%b, %s) : tensor<?x?x2x8xf32>
  %y = linalg.generic {indexing_maps = [#i4, #b4, #i4, #b4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<?x?x2x8xf32>, tensor<?x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x8xf32>) outs(%ey : tensor<?x?x2x8xf32>) {
  ^bb0(%xv: f32, %cv: f32, %rv: f32, %sv: f32, %o: f32):
    %a = arith.mulf %xv, %cv : f32
    %b2 = arith.mulf %rv, %sv : f32
    %r = arith.addf %a, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}

// -----

#p3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#f3 = affine_map<(d0, d1, d2) -> (d2)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// The same size read at dim 9 of a rank-2 tensor: not proven, not raised,
// no crash.
// CHECK-LABEL: func.func @dim_index_past_rank(
// CHECK-NOT: rope.apply
// CHECK: return
func.func @dim_index_past_rank(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x2x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x2x8xf32>
  %cbad = arith.constant 9 : index
  %bad = tensor.dim %p, %cbad : tensor<?x?xi64>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e3 = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %ang = linalg.generic {indexing_maps = [#p3, #f3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<?x?xi64>, tensor<4xf32>) outs(%e3 : tensor<?x?x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<?x?x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
  %e8 = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<?x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sv = math.sin %a : f32
    linalg.yield %sv : f32
  } -> tensor<?x?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%bad, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %e4 = tensor.empty(%b, %s) : tensor<?x?x2x4xf32>
  %n = linalg.negf ins(%x2 : tensor<?x?x2x4xf32>) outs(%e4 : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  %rot = tensor.concat dim(3) %n, %x1 : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x8xf32>
  %ey = tensor.empty(%b, %s) : tensor<?x?x2x8xf32>
  %y = linalg.generic {indexing_maps = [#i4, #b4, #i4, #b4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<?x?x2x8xf32>, tensor<?x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x8xf32>) outs(%ey : tensor<?x?x2x8xf32>) {
  ^bb0(%xv: f32, %cv: f32, %rv: f32, %sv: f32, %o: f32):
    %a = arith.mulf %xv, %cv : f32
    %b2 = arith.mulf %rv, %sv : f32
    %r = arith.addf %a, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}

// -----

#p3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#f3 = affine_map<(d0, d1, d2) -> (d2)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// The same size read at dim 2^40 of a rank-2 tensor: not proven, not raised,
// no crash.
// CHECK-LABEL: func.func @dim_index_huge(
// CHECK-NOT: rope.apply
// CHECK: return
func.func @dim_index_huge(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x2x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x2x8xf32>
  %cbad = arith.constant 1099511627776 : index
  %bad = tensor.dim %p, %cbad : tensor<?x?xi64>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e3 = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %ang = linalg.generic {indexing_maps = [#p3, #f3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<?x?xi64>, tensor<4xf32>) outs(%e3 : tensor<?x?x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<?x?x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
  %e8 = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<?x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sv = math.sin %a : f32
    linalg.yield %sv : f32
  } -> tensor<?x?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%bad, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %e4 = tensor.empty(%b, %s) : tensor<?x?x2x4xf32>
  %n = linalg.negf ins(%x2 : tensor<?x?x2x4xf32>) outs(%e4 : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  %rot = tensor.concat dim(3) %n, %x1 : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x8xf32>
  %ey = tensor.empty(%b, %s) : tensor<?x?x2x8xf32>
  %y = linalg.generic {indexing_maps = [#i4, #b4, #i4, #b4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<?x?x2x8xf32>, tensor<?x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x8xf32>) outs(%ey : tensor<?x?x2x8xf32>) {
  ^bb0(%xv: f32, %cv: f32, %rv: f32, %sv: f32, %o: f32):
    %a = arith.mulf %xv, %cv : f32
    %b2 = arith.mulf %rv, %sv : f32
    %r = arith.addf %a, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}

// -----

#p3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#f3 = affine_map<(d0, d1, d2) -> (d2)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// The same size read at dim -1 of a rank-2 tensor: not proven, not raised,
// no crash.
// CHECK-LABEL: func.func @dim_index_negative(
// CHECK-NOT: rope.apply
// CHECK: return
func.func @dim_index_negative(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x2x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x2x8xf32>
  %cbad = arith.constant -1 : index
  %bad = tensor.dim %p, %cbad : tensor<?x?xi64>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e3 = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %ang = linalg.generic {indexing_maps = [#p3, #f3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<?x?xi64>, tensor<4xf32>) outs(%e3 : tensor<?x?x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<?x?x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
  %e8 = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<?x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sv = math.sin %a : f32
    linalg.yield %sv : f32
  } -> tensor<?x?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%bad, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %e4 = tensor.empty(%b, %s) : tensor<?x?x2x4xf32>
  %n = linalg.negf ins(%x2 : tensor<?x?x2x4xf32>) outs(%e4 : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  %rot = tensor.concat dim(3) %n, %x1 : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x8xf32>
  %ey = tensor.empty(%b, %s) : tensor<?x?x2x8xf32>
  %y = linalg.generic {indexing_maps = [#i4, #b4, #i4, #b4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<?x?x2x8xf32>, tensor<?x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x8xf32>) outs(%ey : tensor<?x?x2x8xf32>) {
  ^bb0(%xv: f32, %cv: f32, %rv: f32, %sv: f32, %o: f32):
    %a = arith.mulf %xv, %cv : f32
    %b2 = arith.mulf %rv, %sv : f32
    %r = arith.addf %a, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}

// -----

// The KV-cache append (RaiseCacheAppend) asks the same question of the
// inserted head count. Control: the size is the tensor.dim of the rotation's
// destination, equal to the cache's head dim only through value bounds.
// CHECK-LABEL: func.func @cache_size_proven_by_bounds(
// CHECK: rope.apply {{.*}} slots(
// CHECK-NOT: tensor.insert_slice
func.func @cache_size_proven_by_bounds(%k: tensor<?x?x64xf32>, %cache: tensor<4096x?x64xf32>, %o: index) -> tensor<4096x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %k, %c0 : tensor<?x?x64xf32>
  %h = tensor.dim %cache, %c1 : tensor<4096x?x64xf32>
  %e = tensor.empty(%t, %h) : tensor<?x?x64xf32>
  %r = rope.apply ins(%k : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {token_dims = array<i64: 0>} -> tensor<?x?x64xf32>
  %heads = tensor.dim %e, %c1 : tensor<?x?x64xf32>
  %c = tensor.insert_slice %r into %cache[%o, 0, 0] [%t, %heads, 64] [1, 1, 1] : tensor<?x?x64xf32> into tensor<4096x?x64xf32>
  return %c : tensor<4096x?x64xf32>
}

// -----

// The head count read at dim 2^40 of a rank-3 tensor: the append is not
// folded, nothing crashes.
// CHECK-LABEL: func.func @cache_dim_index_past_rank(
// CHECK: rope.apply
// CHECK-NOT: slots(
// CHECK: tensor.insert_slice
func.func @cache_dim_index_past_rank(%k: tensor<?x?x64xf32>, %cache: tensor<4096x?x64xf32>, %o: index) -> tensor<4096x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 1099511627776 : index
  %t = tensor.dim %k, %c0 : tensor<?x?x64xf32>
  %h = tensor.dim %cache, %c1 : tensor<4096x?x64xf32>
  %e = tensor.empty(%t, %h) : tensor<?x?x64xf32>
  %r = rope.apply ins(%k : tensor<?x?x64xf32>) outs(%e : tensor<?x?x64xf32>) {token_dims = array<i64: 0>} -> tensor<?x?x64xf32>
  %heads = tensor.dim %k, %c7 : tensor<?x?x64xf32>
  %c = tensor.insert_slice %r into %cache[%o, 0, 0] [%t, %heads, 64] [1, 1, 1] : tensor<?x?x64xf32> into tensor<4096x?x64xf32>
  return %c : tensor<4096x?x64xf32>
}
