// RUN: rope-opt --rope-raise --split-input-file %s | FileCheck %s

// A bf16 model after linalg-fuse-elementwise-ops (torch-mlir's export of HF
// Llama in torch.bfloat16; the zoo's llama_bf16 and llama_eager_bf16 under
// the metamorphic rewrites fuse, gen-fuse, ...): the fused spelling raises
// to the rope ops the unfused one gives, with the model's element types.

// The K rotation fused with repeat_kv's broadcast, K the bf16 truncation of
// an f32 projection (fusion propagated the reshape that stopped the element
// algebra at K above the truncf): the algebra reads K through the truncf
// into the f32 projection; the rotated tensor is the bf16 K, as the model
// had it, not the f32 projection.
// CHECK-LABEL: func.func @k_rotation_through_truncf_broadcast(
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[R:.*]] = rope.apply ins(%[[K]] : tensor<1x2x4x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x2x4x8xbf16>)
// CHECK-NOT: math.

#tok = affine_map<(s, c) -> (s)>
#ch = affine_map<(s, c) -> (c)>
#id2 = affine_map<(s, c) -> (s, c)>
#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
#x5 = affine_map<(b, h, g, s, d) -> (b, h, s, d)>
#t5 = affine_map<(b, h, g, s, d) -> (s, d)>
#id5 = affine_map<(b, h, g, s, d) -> (b, h, g, s, d)>
func.func @k_rotation_through_truncf_broadcast(%kp: tensor<1x2x4x8xf32>, %p: tensor<4xi64>) -> tensor<1x2x2x4x8xbf16> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e48 = tensor.empty() : tensor<4x8xbf16>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %c = math.cos %a : f32
    %t = arith.truncf %c : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %sin = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %s = math.sin %a : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ek = tensor.empty() : tensor<1x2x4x8xbf16>
  %k = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kp : tensor<1x2x4x8xf32>) outs(%ek : tensor<1x2x4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x4x8xbf16>
  %k1 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %k2 = tensor.extract_slice %k[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %eh = tensor.empty() : tensor<1x2x4x4xbf16>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k2 : tensor<1x2x4x4xbf16>) outs(%eh : tensor<1x2x4x4xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.negf %a : bf16
    linalg.yield %m : bf16
  } -> tensor<1x2x4x4xbf16>
  %rot = tensor.concat dim(3) %n, %k1 : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x8xbf16>
  %ey = tensor.empty() : tensor<1x2x2x4x8xbf16>
  %y = linalg.generic {indexing_maps = [#x5, #t5, #x5, #t5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %cos, %rot, %sin : tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x8xbf16>) outs(%ey : tensor<1x2x2x4x8xbf16>) {
  ^bb0(%x: bf16, %c: bf16, %r: bf16, %s: bf16, %o: bf16):
    %0 = arith.mulf %r, %s : bf16
    %1 = arith.mulf %x, %c : bf16
    %2 = arith.addf %1, %0 : bf16
    linalg.yield %2 : bf16
  } -> tensor<1x2x2x4x8xbf16>
  return %y : tensor<1x2x2x4x8xbf16>
}
