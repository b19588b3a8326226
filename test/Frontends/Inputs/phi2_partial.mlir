#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x40xf32>, %arg1: tensor<2x2x8x40xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x40xf32>, tensor<2x2x8x40xf32>) {
    %cst = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %19 = arith.sitofp %in : i64 to f32
      linalg.yield %19 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<2x8x1xf32>, tensor<8xf32>) outs(%2 : tensor<2x8x8xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.mulf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x8x8xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
    %4 = tensor.empty() : tensor<2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = math.cos %in : f32
      linalg.yield %19 : f32
    } -> tensor<2x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = math.sin %in : f32
      linalg.yield %19 : f32
    } -> tensor<2x8x16xf32>
    %extracted_slice = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x40xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_0 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 24] [1, 1, 1, 1] : tensor<2x4x8x40xf32> to tensor<2x4x8x24xf32>
    %extracted_slice_1 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x40xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_2 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 24] [1, 1, 1, 1] : tensor<2x2x8x40xf32> to tensor<2x2x8x24xf32>
    %expanded_3 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %expanded_4 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %7 = tensor.empty() : tensor<2x4x8x16xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice, %expanded_3 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.mulf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x4x8x16xf32>
    %extracted_slice_5 = tensor.extract_slice %extracted_slice[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %extracted_slice_6 = tensor.extract_slice %extracted_slice[0, 0, 0, 8] [2, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %9 = tensor.empty() : tensor<2x4x8x8xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_6 : tensor<2x4x8x8xf32>) outs(%9 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.negf %in : f32
      linalg.yield %19 : f32
    } -> tensor<2x4x8x8xf32>
    %concat_7 = tensor.concat dim(3) %10, %extracted_slice_5 : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_7, %expanded_4 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.mulf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %11 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.addf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x4x8x16xf32>
    %13 = tensor.empty() : tensor<2x2x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_1, %expanded_3 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.mulf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x2x8x16xf32>
    %extracted_slice_8 = tensor.extract_slice %extracted_slice_1[0, 0, 0, 0] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %extracted_slice_9 = tensor.extract_slice %extracted_slice_1[0, 0, 0, 8] [2, 2, 8, 8] [1, 1, 1, 1] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %15 = tensor.empty() : tensor<2x2x8x8xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_9 : tensor<2x2x8x8xf32>) outs(%15 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %19 = arith.negf %in : f32
      linalg.yield %19 : f32
    } -> tensor<2x2x8x8xf32>
    %concat_10 = tensor.concat dim(3) %16, %extracted_slice_8 : (tensor<2x2x8x8xf32>, tensor<2x2x8x8xf32>) -> tensor<2x2x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_10, %expanded_4 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.mulf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x2x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %17 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%13 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_13: f32, %out: f32):
      %19 = arith.addf %in, %in_13 : f32
      linalg.yield %19 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_11 = tensor.concat dim(3) %12, %extracted_slice_0 : (tensor<2x4x8x16xf32>, tensor<2x4x8x24xf32>) -> tensor<2x4x8x40xf32>
    %concat_12 = tensor.concat dim(3) %18, %extracted_slice_2 : (tensor<2x2x8x16xf32>, tensor<2x2x8x24xf32>) -> tensor<2x2x8x40xf32>
    return %concat_11, %concat_12 : tensor<2x4x8x40xf32>, tensor<2x2x8x40xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
