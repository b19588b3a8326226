#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x2x8x32xf32>, %arg2: tensor<3x2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>) {
    %cst = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1], [2, 3]] output_shape [3, 2, 8, 1] : tensor<3x2x8xi64> into tensor<3x2x8x1xi64>
    %0 = tensor.empty() : tensor<3x2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<3x2x8x1xi64>) outs(%0 : tensor<3x2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %18 = arith.sitofp %in : i64 to f32
      linalg.yield %18 : f32
    } -> tensor<3x2x8x1xf32>
    %2 = tensor.empty() : tensor<3x2x8x16xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<3x2x8x1xf32>, tensor<16xf32>) outs(%2 : tensor<3x2x8x16xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.mulf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<3x2x8x16xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<3x2x8x16xf32>) outs(%2 : tensor<3x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = math.cos %in : f32
      linalg.yield %18 : f32
    } -> tensor<3x2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<3x2x8x16xf32>) outs(%2 : tensor<3x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = math.sin %in : f32
      linalg.yield %18 : f32
    } -> tensor<3x2x8x16xf32>
    %extracted_slice = tensor.extract_slice %5[0, 0, 0, 0] [3, 2, 8, 4] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x4xf32>
    %extracted_slice_0 = tensor.extract_slice %5[0, 0, 0, 4] [3, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x6xf32>
    %extracted_slice_1 = tensor.extract_slice %5[0, 0, 0, 10] [3, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x6xf32>
    %extracted_slice_2 = tensor.extract_slice %extracted_slice[0, 0, 0, 0] [1, 2, 8, 4] [1, 1, 1, 1] : tensor<3x2x8x4xf32> to tensor<1x2x8x4xf32>
    %collapsed = tensor.collapse_shape %extracted_slice_2 [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
    %extracted_slice_3 = tensor.extract_slice %extracted_slice_0[1, 0, 0, 0] [1, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x6xf32> to tensor<1x2x8x6xf32>
    %collapsed_4 = tensor.collapse_shape %extracted_slice_3 [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32>
    %extracted_slice_5 = tensor.extract_slice %extracted_slice_1[2, 0, 0, 0] [1, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x6xf32> to tensor<1x2x8x6xf32>
    %collapsed_6 = tensor.collapse_shape %extracted_slice_5 [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32>
    %concat = tensor.concat dim(2) %collapsed, %collapsed_4, %collapsed_6 : (tensor<2x8x4xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>) -> tensor<2x8x16xf32>
    %concat_7 = tensor.concat dim(2) %concat, %concat : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
    %extracted_slice_8 = tensor.extract_slice %4[0, 0, 0, 0] [3, 2, 8, 4] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x4xf32>
    %extracted_slice_9 = tensor.extract_slice %4[0, 0, 0, 4] [3, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x6xf32>
    %extracted_slice_10 = tensor.extract_slice %4[0, 0, 0, 10] [3, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x16xf32> to tensor<3x2x8x6xf32>
    %extracted_slice_11 = tensor.extract_slice %extracted_slice_8[0, 0, 0, 0] [1, 2, 8, 4] [1, 1, 1, 1] : tensor<3x2x8x4xf32> to tensor<1x2x8x4xf32>
    %collapsed_12 = tensor.collapse_shape %extracted_slice_11 [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
    %extracted_slice_13 = tensor.extract_slice %extracted_slice_9[1, 0, 0, 0] [1, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x6xf32> to tensor<1x2x8x6xf32>
    %collapsed_14 = tensor.collapse_shape %extracted_slice_13 [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32>
    %extracted_slice_15 = tensor.extract_slice %extracted_slice_10[2, 0, 0, 0] [1, 2, 8, 6] [1, 1, 1, 1] : tensor<3x2x8x6xf32> to tensor<1x2x8x6xf32>
    %collapsed_16 = tensor.collapse_shape %extracted_slice_15 [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32>
    %concat_17 = tensor.concat dim(2) %collapsed_12, %collapsed_14, %collapsed_16 : (tensor<2x8x4xf32>, tensor<2x8x6xf32>, tensor<2x8x6xf32>) -> tensor<2x8x16xf32>
    %concat_18 = tensor.concat dim(2) %concat_17, %concat_17 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
    %expanded_19 = tensor.expand_shape %concat_18 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %expanded_20 = tensor.expand_shape %concat_7 [[0], [1, 2], [3]] output_shape [2, 1, 8, 32] : tensor<2x8x32xf32> into tensor<2x1x8x32xf32>
    %6 = tensor.empty() : tensor<2x4x8x32xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %expanded_19 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%6 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.mulf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x8x32xf32>
    %extracted_slice_21 = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_22 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %8 = tensor.empty() : tensor<2x4x8x16xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_22 : tensor<2x4x8x16xf32>) outs(%8 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.negf %in : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x8x16xf32>
    %concat_23 = tensor.concat dim(3) %9, %extracted_slice_21 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_23, %expanded_20 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) outs(%6 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.mulf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x8x32xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%7, %10 : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) outs(%6 : tensor<2x4x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.addf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x4x8x32xf32>
    %12 = tensor.empty() : tensor<2x2x8x32xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg1, %expanded_19 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%12 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.mulf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x2x8x32xf32>
    %extracted_slice_24 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_25 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %14 = tensor.empty() : tensor<2x2x8x16xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_25 : tensor<2x2x8x16xf32>) outs(%14 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %18 = arith.negf %in : f32
      linalg.yield %18 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_26 = tensor.concat dim(3) %15, %extracted_slice_24 : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x32xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map3, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%concat_26, %expanded_20 : tensor<2x2x8x32xf32>, tensor<2x1x8x32xf32>) outs(%12 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.mulf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x2x8x32xf32>
    %17 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%13, %16 : tensor<2x2x8x32xf32>, tensor<2x2x8x32xf32>) outs(%12 : tensor<2x2x8x32xf32>) {
    ^bb0(%in: f32, %in_27: f32, %out: f32):
      %18 = arith.addf %in, %in_27 : f32
      linalg.yield %18 : f32
    } -> tensor<2x2x8x32xf32>
    return %11, %17 : tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F9AF50F3F9BE8A13E8718363ECDCCCC3DC255663DE386013D39AD913C0AD7233C9C44B83B383E4F3B2815E93A6F12833A166A133A60CBA53953773A39"
    }
  }
#-}
