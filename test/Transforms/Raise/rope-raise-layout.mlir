// RUN: rope-opt --rope-raise=remarks=true --split-input-file %s 2>&1 | FileCheck %s

// Whole-model spellings, hand-reduced from the torch-mlir zoo (llama): q/k
// are not function arguments but a matmul result [S, H*D] reshaped to
// [1, S, H, D] and transposed to [1, H, S, D]. The rotation reads the
// transposed value element for element; the algebra looks through the
// transpose and stops at the reshape (it merges heads and channels), so the
// rotated leaf is the reshape's result read in another layout. rope.apply
// rotates the value the rotation reads: that layout copied into [1, H, S, D]
// (a linalg.generic reading the reshape through the transposing map).
// H = 2, S = 4, D = 8; inv_freq is the f32 rounding of 10000^(-2i/8).

#pos = affine_map<(d0, d1, d2) -> (0, d1)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>

// CHECK: #[[$READ:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME: %[[H:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x16xf32>, %[[P:.*]]: tensor<1x4xi64>
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: %[[E:.*]] = tensor.expand_shape %[[MM]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 2, 8]
// CHECK: %[[PC:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<1x4xi64> into tensor<4xi64>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$READ:.*]], #{{.*}}], {{.*}}} ins(%[[E]] : tensor<1x4x2x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
// CHECK: %[[R:.*]] = rope.apply ins(%[[T]] : tensor<1x2x4x8xf32>) positions(%[[PC]] : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xf32>) {freqs = #rope.default<>, token_dims = array<i64: 2>}
// CHECK-NOT: math.cos
// CHECK: return %[[R]]
func.func @prefill(%h: tensor<4x16xf32>, %w: tensor<16x16xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%h, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<4x16xf32> into tensor<1x4x2x8xf32>
  %et = tensor.empty() : tensor<1x2x4x8xf32>
  %x = linalg.transpose ins(%ex : tensor<1x4x2x8xf32>) outs(%et : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  // cos/sin [1, 1, S, D] from the position ids, broadcast over the heads.
  %e3 = tensor.empty() : tensor<1x4x4xf32>
  %ang = linalg.generic {indexing_maps = [#pos, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<1x4xi64>, tensor<4xf32>) outs(%e3 : tensor<1x4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<1x4x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %e8 = tensor.empty() : tensor<1x4x8xf32>
  %cos3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x4x8xf32>
  %sin3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8xf32>
  %cos = tensor.expand_shape %cos3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  %sin = tensor.expand_shape %sin3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  // x * cos + rotate_half(x) * sin.
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %eh = tensor.empty() : tensor<1x2x4x4xf32>
  %nx2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<1x2x4x4xf32>) outs(%eh : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %nx2, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Decode (one token): torch-mlir reads the size-1 dims of the position ids
// through constant indices, so the angle's position factor varies over no
// frame dim, like the frequency table does; it is not a constant, it is the
// one token's position (converted from integers), and the raised op reads it
// as a [1] stream along the size-1 sequence dim (token_dims as at S > 1).

#pos1 = affine_map<(d0, d1, d2) -> (0, 0)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs4 = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>

// CHECK-LABEL: func.func @decode(
// CHECK-SAME: %[[H:.*]]: tensor<1x16xf32>, %[[W:.*]]: tensor<16x16xf32>, %[[P:.*]]: tensor<1x1xi64>
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [1, 1, 2, 8]
// CHECK: %[[PC:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1]] : tensor<1x1xi64> into tensor<1xi64>
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1x1x2x8xf32>)
// CHECK: %[[R:.*]] = rope.apply ins(%[[T]] : tensor<1x2x1x8xf32>) positions(%[[PC]] : tensor<1xi64>) outs(%{{.*}} : tensor<1x2x1x8xf32>) {freqs = #rope.default<>, token_dims = array<i64: 2>}
// CHECK-NOT: math.sin
// CHECK: return %[[R]]
func.func @decode(%h: tensor<1x16xf32>, %w: tensor<16x16xf32>, %p: tensor<1x1xi64>) -> tensor<1x2x1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e2 = tensor.empty() : tensor<1x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x16xf32>) -> tensor<1x16xf32>
  %mm = linalg.matmul ins(%h, %w : tensor<1x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<1x16xf32>) -> tensor<1x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 1, 2, 8] : tensor<1x16xf32> into tensor<1x1x2x8xf32>
  %et = tensor.empty() : tensor<1x2x1x8xf32>
  %x = linalg.transpose ins(%ex : tensor<1x1x2x8xf32>) outs(%et : tensor<1x2x1x8xf32>) permutation = [0, 2, 1, 3]
  %e3 = tensor.empty() : tensor<1x1x4xf32>
  %ang = linalg.generic {indexing_maps = [#pos1, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<1x1xi64>, tensor<4xf32>) outs(%e3 : tensor<1x1x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<1x1x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<1x1x4xf32>, tensor<1x1x4xf32>) -> tensor<1x1x8xf32>
  %e8 = tensor.empty() : tensor<1x1x8xf32>
  %cos3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x1x8xf32>) outs(%e8 : tensor<1x1x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x1x8xf32>
  %sin3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x1x8xf32>) outs(%e8 : tensor<1x1x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x1x8xf32>
  %cos = tensor.expand_shape %cos3 [[0, 1], [2], [3]] output_shape [1, 1, 1, 8] : tensor<1x1x8xf32> into tensor<1x1x1x8xf32>
  %sin = tensor.expand_shape %sin3 [[0, 1], [2], [3]] output_shape [1, 1, 1, 8] : tensor<1x1x8xf32> into tensor<1x1x1x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x8xf32> to tensor<1x2x1x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x8xf32> to tensor<1x2x1x4xf32>
  %eh = tensor.empty() : tensor<1x2x1x4xf32>
  %nx2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<1x2x1x4xf32>) outs(%eh : tensor<1x2x1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x1x4xf32>
  %rot = tensor.concat dim(3) %nx2, %x1 : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x1x8xf32>, tensor<1x1x1x8xf32>) outs(%et : tensor<1x2x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x1x8xf32>, tensor<1x1x1x8xf32>) outs(%et : tensor<1x2x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x1x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xc, %rs : tensor<1x2x1x8xf32>, tensor<1x2x1x8xf32>) outs(%et : tensor<1x2x1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x1x8xf32>
  return %y : tensor<1x2x1x8xf32>
}

// -----

// A fused projection (GPT-NeoX): q, k, v are windows of one [1, H, S, 3D]
// transpose of the reshaped matmul; k is channels [D, 2D). The rotation reads
// that window of the reshape's channel dim, sliced before the layout copy.

// CHECK: #[[$READK:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @fused_qkv(
// CHECK-SAME: %[[H:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x48xf32>, %[[P:.*]]: tensor<1x4xi64>
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 2, 24]
// CHECK: %[[K:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 8] [1, 4, 2, 8] [1, 1, 1, 1] : tensor<1x4x2x24xf32> to tensor<1x4x2x8xf32>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[$READK]], #{{.*}}], {{.*}}} ins(%[[K]] : tensor<1x4x2x8xf32>)
// CHECK: %[[R:.*]] = rope.apply ins(%[[T]] : tensor<1x2x4x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xf32>) {freqs = #rope.default<>, token_dims = array<i64: 2>}
// CHECK-NOT: math.cos
// CHECK: return %[[R]]

#pos = affine_map<(d0, d1, d2) -> (0, d1)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>

func.func @fused_qkv(%h: tensor<4x16xf32>, %w: tensor<16x48xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x48xf32>) -> tensor<4x48xf32>
  %mm = linalg.matmul ins(%h, %w : tensor<4x16xf32>, tensor<16x48xf32>) outs(%acc : tensor<4x48xf32>) -> tensor<4x48xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 4, 2, 24] : tensor<4x48xf32> into tensor<1x4x2x24xf32>
  %e24 = tensor.empty() : tensor<1x2x4x24xf32>
  %qkv = linalg.transpose ins(%ex : tensor<1x4x2x24xf32>) outs(%e24 : tensor<1x2x4x24xf32>) permutation = [0, 2, 1, 3]
  %et = tensor.empty() : tensor<1x2x4x8xf32>
  // k: the second D channels of each head.
  %x = tensor.extract_slice %qkv[0, 0, 0, 8] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x4x24xf32> to tensor<1x2x4x8xf32>
  // cos/sin [1, 1, S, D] from the position ids, broadcast over the heads.
  %e3 = tensor.empty() : tensor<1x4x4xf32>
  %ang = linalg.generic {indexing_maps = [#pos, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<1x4xi64>, tensor<4xf32>) outs(%e3 : tensor<1x4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<1x4x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x8xf32>
  %e8 = tensor.empty() : tensor<1x4x8xf32>
  %cos3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x4x8xf32>
  %sin3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8xf32>
  %cos = tensor.expand_shape %cos3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  %sin = tensor.expand_shape %sin3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  // x * cos + rotate_half(x) * sin.
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %x2 = tensor.extract_slice %qkv[0, 0, 0, 12] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x24xf32> to tensor<1x2x4x4xf32>
  %eh = tensor.empty() : tensor<1x2x4x4xf32>
  %nx2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x2 : tensor<1x2x4x4xf32>) outs(%eh : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x4x4xf32>
  %rot = tensor.concat dim(3) %nx2, %x1 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Interleaved pairs (Cohere's rotate_every_two and repeat_interleave'd
// cos/sin): the x * cos term reads the transposed q with batch as a frame
// dim, the partner path reaches the same reshape through strided slices and
// a stack as a unit dim; both read index 0 of that size-1 dim, so they are
// one x.

// CHECK-LABEL: func.func @interleaved(
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 2, 8]
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1x4x2x8xf32>)
// CHECK: %[[R:.*]] = rope.apply ins(%[[T]] : tensor<1x2x4x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xf32>) {freqs = #rope.default<>, layout = #rope.layout<interleaved>, token_dims = array<i64: 2>}
// CHECK-NOT: math.cos
// CHECK: return %[[R]]

#pos = affine_map<(d0, d1, d2) -> (0, d1)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>

func.func @interleaved(%h: tensor<4x16xf32>, %w: tensor<16x16xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%h, %w : tensor<4x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<4x16xf32> into tensor<1x4x2x8xf32>
  %et = tensor.empty() : tensor<1x2x4x8xf32>
  %x = linalg.transpose ins(%ex : tensor<1x4x2x8xf32>) outs(%et : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  // cos/sin [1, 1, S, D] from the position ids, broadcast over the heads.
  %e3 = tensor.empty() : tensor<1x4x4xf32>
  %ang = linalg.generic {indexing_maps = [#pos, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<1x4xi64>, tensor<4xf32>) outs(%e3 : tensor<1x4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<1x4x4xf32>
  // repeat_interleave(freqs, 2): each angle twice, side by side.
  %ang1 = tensor.expand_shape %ang [[0], [1], [2, 3]] output_shape [1, 4, 4, 1] : tensor<1x4x4xf32> into tensor<1x4x4x1xf32>
  %ang2 = tensor.concat dim(3) %ang1, %ang1 : (tensor<1x4x4x1xf32>, tensor<1x4x4x1xf32>) -> tensor<1x4x4x2xf32>
  %emb = tensor.collapse_shape %ang2 [[0], [1], [2, 3]] : tensor<1x4x4x2xf32> into tensor<1x4x8xf32>
  %e8 = tensor.empty() : tensor<1x4x8xf32>
  %cos3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<1x4x8xf32>
  %sin3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<1x4x8xf32>) outs(%e8 : tensor<1x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8xf32>
  %cos = tensor.expand_shape %cos3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  %sin = tensor.expand_shape %sin3 [[0, 1], [2], [3]] output_shape [1, 1, 4, 8] : tensor<1x4x8xf32> into tensor<1x1x4x8xf32>
  // x * cos + rotate_half(x) * sin.
  // rotate_every_two: (-x[2i+1], x[2i]) stacked on a new last dim and
  // flattened (Cohere).
  %xe = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 2] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %xo = tensor.extract_slice %x[0, 0, 0, 1] [1, 2, 4, 4] [1, 1, 1, 2] : tensor<1x2x4x8xf32> to tensor<1x2x4x4xf32>
  %eh = tensor.empty() : tensor<1x2x4x4xf32>
  %nxo = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xo : tensor<1x2x4x4xf32>) outs(%eh : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x2x4x4xf32>
  %s0 = tensor.expand_shape %nxo [[0], [1], [2], [3, 4]] output_shape [1, 2, 4, 4, 1] : tensor<1x2x4x4xf32> into tensor<1x2x4x4x1xf32>
  %s1 = tensor.expand_shape %xe [[0], [1], [2], [3, 4]] output_shape [1, 2, 4, 4, 1] : tensor<1x2x4x4xf32> into tensor<1x2x4x4x1xf32>
  %st = tensor.concat dim(4) %s0, %s1 : (tensor<1x2x4x4x1xf32>, tensor<1x2x4x4x1xf32>) -> tensor<1x2x4x4x2xf32>
  %rot = tensor.collapse_shape %st [[0], [1], [2], [3, 4]] : tensor<1x2x4x4x2xf32> into tensor<1x2x4x8xf32>
  %xc = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%rot, %sin : tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xc, %rs : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%et : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}
