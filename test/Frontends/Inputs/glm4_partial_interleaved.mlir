#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x2x8x32xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>) {
    %cst = arith.constant dense_resource<torch_tensor_8_torch.float32> : tensor<8xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %22 = arith.sitofp %in : i64 to f32
      linalg.yield %22 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<2x8x1xf32>, tensor<8xf32>) outs(%2 : tensor<2x8x8xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.mulf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x8xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
    %4 = tensor.empty() : tensor<2x8x16xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.cos %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x16xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x16xf32>) outs(%4 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.sin %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x8x16xf32>
    %expanded_0 = tensor.expand_shape %5 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %expanded_1 = tensor.expand_shape %6 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %extracted_slice = tensor.extract_slice %expanded_0[0, 0, 0, 0] [2, 1, 8, 8] [1, 1, 1, 1] : tensor<2x1x8x16xf32> to tensor<2x1x8x8xf32>
    %7 = tensor.empty() : tensor<2x1x8x8x2xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice : tensor<2x1x8x8xf32>) outs(%7 : tensor<2x1x8x8x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x1x8x8x2xf32>
    %collapsed = tensor.collapse_shape %8 [[0], [1], [2], [3, 4]] : tensor<2x1x8x8x2xf32> into tensor<2x1x8x16xf32>
    %extracted_slice_2 = tensor.extract_slice %expanded_1[0, 0, 0, 0] [2, 1, 8, 8] [1, 1, 1, 1] : tensor<2x1x8x16xf32> to tensor<2x1x8x8xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_2 : tensor<2x1x8x8xf32>) outs(%7 : tensor<2x1x8x8x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x1x8x8x2xf32>
    %collapsed_3 = tensor.collapse_shape %9 [[0], [1], [2], [3, 4]] : tensor<2x1x8x8x2xf32> into tensor<2x1x8x16xf32>
    %extracted_slice_4 = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_5 = tensor.extract_slice %arg0[0, 0, 0, 16] [2, 4, 8, 16] [1, 1, 1, 1] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_6 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %extracted_slice_7 = tensor.extract_slice %arg1[0, 0, 0, 16] [2, 2, 8, 16] [1, 1, 1, 1] : tensor<2x2x8x32xf32> to tensor<2x2x8x16xf32>
    %10 = tensor.empty() : tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4, %collapsed : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%10 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.mulf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %extracted_slice_8 = tensor.extract_slice %extracted_slice_4[0, 0, 0, 0] [2, 4, 8, 8] [1, 1, 1, 2] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %extracted_slice_9 = tensor.extract_slice %extracted_slice_4[0, 0, 0, 1] [2, 4, 8, 8] [1, 1, 1, 2] : tensor<2x4x8x16xf32> to tensor<2x4x8x8xf32>
    %12 = tensor.empty() : tensor<2x4x8x8xf32>
    %13 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_9 : tensor<2x4x8x8xf32>) outs(%12 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.negf %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x8xf32>
    %expanded_10 = tensor.expand_shape %13 [[0], [1], [2], [3, 4]] output_shape [2, 4, 8, 8, 1] : tensor<2x4x8x8xf32> into tensor<2x4x8x8x1xf32>
    %expanded_11 = tensor.expand_shape %extracted_slice_8 [[0], [1], [2], [3, 4]] output_shape [2, 4, 8, 8, 1] : tensor<2x4x8x8xf32> into tensor<2x4x8x8x1xf32>
    %concat_12 = tensor.concat dim(4) %expanded_10, %expanded_11 : (tensor<2x4x8x8x1xf32>, tensor<2x4x8x8x1xf32>) -> tensor<2x4x8x8x2xf32>
    %collapsed_13 = tensor.collapse_shape %concat_12 [[0], [1], [2], [3, 4]] : tensor<2x4x8x8x2xf32> into tensor<2x4x8x16xf32>
    %14 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_13, %collapsed_3 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%10 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.mulf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %15 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %14 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%10 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.addf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x4x8x16xf32>
    %16 = tensor.empty() : tensor<2x2x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_6, %collapsed : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%16 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.mulf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %extracted_slice_14 = tensor.extract_slice %extracted_slice_6[0, 0, 0, 0] [2, 2, 8, 8] [1, 1, 1, 2] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %extracted_slice_15 = tensor.extract_slice %extracted_slice_6[0, 0, 0, 1] [2, 2, 8, 8] [1, 1, 1, 2] : tensor<2x2x8x16xf32> to tensor<2x2x8x8xf32>
    %18 = tensor.empty() : tensor<2x2x8x8xf32>
    %19 = linalg.generic {indexing_maps = [#map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_15 : tensor<2x2x8x8xf32>) outs(%18 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.negf %in : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x8xf32>
    %expanded_16 = tensor.expand_shape %19 [[0], [1], [2], [3, 4]] output_shape [2, 2, 8, 8, 1] : tensor<2x2x8x8xf32> into tensor<2x2x8x8x1xf32>
    %expanded_17 = tensor.expand_shape %extracted_slice_14 [[0], [1], [2], [3, 4]] output_shape [2, 2, 8, 8, 1] : tensor<2x2x8x8xf32> into tensor<2x2x8x8x1xf32>
    %concat_18 = tensor.concat dim(4) %expanded_16, %expanded_17 : (tensor<2x2x8x8x1xf32>, tensor<2x2x8x8x1xf32>) -> tensor<2x2x8x8x2xf32>
    %collapsed_19 = tensor.collapse_shape %concat_18 [[0], [1], [2], [3, 4]] : tensor<2x2x8x8x2xf32> into tensor<2x2x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map5, #map6, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed_19, %collapsed_3 : tensor<2x2x8x16xf32>, tensor<2x1x8x16xf32>) outs(%16 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.mulf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %21 = linalg.generic {indexing_maps = [#map5, #map5, #map5], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%17, %20 : tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%16 : tensor<2x2x8x16xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %22 = arith.addf %in, %in_22 : f32
      linalg.yield %22 : f32
    } -> tensor<2x2x8x16xf32>
    %concat_20 = tensor.concat dim(3) %15, %extracted_slice_5 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %concat_21 = tensor.concat dim(3) %21, %extracted_slice_7 : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x32xf32>
    return %concat_20, %concat_21 : tensor<2x4x8x32xf32>, tensor<2x2x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_8_torch.float32: "0x040000000000803F9BE8A13ECDCCCC3DE386013D0AD7233C383E4F3B6F12833A60CBA539"
    }
  }
#-}
