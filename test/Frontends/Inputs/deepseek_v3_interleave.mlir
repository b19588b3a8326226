#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
module {
  func.func @main(%arg0: tensor<2x4x8x32xf32>, %arg1: tensor<2x1x8x32xf32>, %arg2: tensor<2x8xi64>) -> (tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>) {
    %cst = arith.constant dense_resource<torch_tensor_16_torch.float32> : tensor<16xf32>
    %expanded = tensor.expand_shape %arg2 [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
    %0 = tensor.empty() : tensor<2x8x1xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x8x1xi64>) outs(%0 : tensor<2x8x1xf32>) {
    ^bb0(%in: i64, %out: f32):
      %21 = arith.sitofp %in : i64 to f32
      linalg.yield %21 : f32
    } -> tensor<2x8x1xf32>
    %2 = tensor.empty() : tensor<2x8x16xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%1, %cst : tensor<2x8x1xf32>, tensor<16xf32>) outs(%2 : tensor<2x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x16xf32>
    %concat = tensor.concat dim(2) %3, %3 : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x32xf32>
    %4 = tensor.empty() : tensor<2x8x32xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = math.cos %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x32xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%concat : tensor<2x8x32xf32>) outs(%4 : tensor<2x8x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %21 = math.sin %in : f32
      linalg.yield %21 : f32
    } -> tensor<2x8x32xf32>
    %extracted_slice = tensor.extract_slice %5[0, 0, 0] [2, 8, 16] [1, 1, 1] : tensor<2x8x32xf32> to tensor<2x8x16xf32>
    %expanded_0 = tensor.expand_shape %extracted_slice [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %extracted_slice_1 = tensor.extract_slice %6[0, 0, 0] [2, 8, 16] [1, 1, 1] : tensor<2x8x32xf32> to tensor<2x8x16xf32>
    %expanded_2 = tensor.expand_shape %extracted_slice_1 [[0], [1, 2], [3]] output_shape [2, 1, 8, 16] : tensor<2x8x16xf32> into tensor<2x1x8x16xf32>
    %extracted_slice_3 = tensor.extract_slice %arg0[0, 0, 0, 0] [2, 4, 8, 16] [1, 1, 1, 2] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_4 = tensor.extract_slice %arg0[0, 0, 0, 1] [2, 4, 8, 16] [1, 1, 1, 2] : tensor<2x4x8x32xf32> to tensor<2x4x8x16xf32>
    %extracted_slice_5 = tensor.extract_slice %arg1[0, 0, 0, 0] [2, 1, 8, 16] [1, 1, 1, 2] : tensor<2x1x8x32xf32> to tensor<2x1x8x16xf32>
    %extracted_slice_6 = tensor.extract_slice %arg1[0, 0, 0, 1] [2, 1, 8, 16] [1, 1, 1, 2] : tensor<2x1x8x32xf32> to tensor<2x1x8x16xf32>
    %7 = tensor.empty() : tensor<2x4x8x16xf32>
    %8 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_3, %expanded_0 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %9 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4, %expanded_2 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %10 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8, %9 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.subf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %11 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_4, %expanded_0 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_3, %expanded_2 : tensor<2x4x8x16xf32>, tensor<2x1x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %13 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11, %12 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) outs(%7 : tensor<2x4x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.addf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x4x8x16xf32>
    %concat_7 = tensor.concat dim(3) %10, %13 : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x32xf32>
    %14 = tensor.empty() : tensor<2x1x8x16xf32>
    %15 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5, %expanded_0 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %16 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_6, %expanded_2 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %17 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%15, %16 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.subf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %18 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_6, %expanded_0 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %19 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%extracted_slice_5, %expanded_2 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.mulf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %20 = linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%18, %19 : tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) outs(%14 : tensor<2x1x8x16xf32>) {
    ^bb0(%in: f32, %in_9: f32, %out: f32):
      %21 = arith.addf %in, %in_9 : f32
      linalg.yield %21 : f32
    } -> tensor<2x1x8x16xf32>
    %concat_8 = tensor.concat dim(3) %17, %20 : (tensor<2x1x8x16xf32>, tensor<2x1x8x16xf32>) -> tensor<2x1x8x32xf32>
    return %concat_7, %concat_8 : tensor<2x4x8x32xf32>, tensor<2x1x8x32xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_16_torch.float32: "0x040000000000803F9AF50F3F9BE8A13E8718363ECDCCCC3DC255663DE386013D39AD913C0AD7233C9C44B83B383E4F3B2815E93A6F12833A166A133A60CBA53953773A39"
    }
  }
#-}
