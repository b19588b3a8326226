#map = affine_map<(d0, d1, d2) -> (d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x2x8x32xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %0 = tensor.empty() : tensor<2x16x1xf32>
    %expanded = tensor.expand_shape %cst_0 [[0, 1]] output_shape [16, 1] : tensor<16xf32> into tensor<16x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<16x1xf32>) outs(%0 : tensor<2x16x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x1xf32>
    %expanded_1 = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 1, 8] : tensor<2x8xi64> into tensor<2x1x8xi64>
    %2 = tensor.empty() : tensor<2x1x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_1 : tensor<2x1x8xi64>) outs(%2 : tensor<2x1x8xf32>) {
    ^bb0(%in: i64, %out: f32):
      %23 = arith.sitofp %in : i64 to f32
      linalg.yield %23 : f32
    } -> tensor<2x1x8xf32>
    %4 = tensor.empty() : tensor<2x16x8xf32>
    %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
    %6 = linalg.batch_matmul ins(%1, %3 : tensor<2x16x1xf32>, tensor<2x1x8xf32>) outs(%5 : tensor<2x16x8xf32>) -> tensor<2x16x8xf32>
    %7 = tensor.empty() : tensor<2x8x16xf32>
    %transposed = linalg.transpose ins(%6 : tensor<2x16x8xf32>) outs(%7 : tensor<2x8x16xf32>) permutation = [0, 2, 1] 
    %concat = tensor.concat dim(2) %transposed, %transposed : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
    %8 = tensor.empty() : tensor<2x8x32xf32>
    %9 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%8 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = math.cos %in : f32
      linalg.yield %23 : f32
    } -> tensor<2x8x32xf32>
    %10 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%8 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = math.sin %in : f32
      linalg.yield %23 : f32
    } -> tensor<2x8x32xf32>
    %expanded_2 = tensor.expand_shape %9 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %expanded_3 = tensor.expand_shape %10 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %11 = tensor.empty() : tensor<2x4x8x32xf32>
    %12 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_2 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%11 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.mulf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x8x32xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_4 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %13 = tensor.empty() : tensor<2x4x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4 : tensor<2x4x8x16xf32>) outs(%13 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = arith.negf %in : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x8x16xf32>
    %concat_5 = tensor.concat dim(3) %14, %extracted_slice : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %15 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_5, %expanded_3 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%11 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.mulf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x8x32xf32>
    %16 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%12, %15 : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) outs(%11 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.addf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x4x8x32xf32>
    %17 = tensor.empty() : tensor<2x2x8x32xf32>
    %18 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_2 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%17 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.mulf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x2x8x32xf32>
    %extracted_slice_6 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_7 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %19 = tensor.empty() : tensor<2x2x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_7 : tensor<2x2x8x16xf32>) outs(%19 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %23 = arith.negf %in : f32
      linalg.yield %23 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_8 = tensor.concat dim(3) %20, %extracted_slice_6 : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x32xf32>
    %21 = linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_8, %expanded_3 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%17 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.mulf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x2x8x32xf32>
    %22 = linalg.generic {indexing_maps = [#map2, #map2, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %21 : tensor<2x2x8x32xf32>, tensor<2x2x8x32xf32>) outs(%17 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %23 = arith.addf %in, %in_9 : f32
      linalg.yield %23 : f32
    } -> tensor<2x2x8x32xf32>
    return %16, %22 : tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F9AF50F3F9BE8A13E8718363ECDCCCC3DC255663DE386013D39AD913C0AD7233C9C44B83B383E4F3B2815E93A6F12833A166A133A60CBA53953773A39"
    }
  }
#-}
